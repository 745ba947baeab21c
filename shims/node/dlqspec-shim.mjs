// dlqspec-shim.mjs: runs a student's JavaScript/TypeScript solution under dlqspec's JSON-lines protocol v1 (usage: node dlqspec-shim.mjs solution.{mjs,js,ts}).
import fs from 'node:fs';
import path from 'node:path';
import Module, { createRequire, register } from 'node:module';
import { StringDecoder } from 'node:string_decoder';
import { format } from 'node:util';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { GIVEN_SPECIFIER, redirectsToGiven } from './given-hooks.mjs';

const PROTOCOL = 1;
// The shim knows no contract by name: dlqspec's hello describes each one (its class, its given
// parts, its errors), and the `given` module is built from that before the solution loads.

// --- the protocol channel; what the student prints is captured ---
// Node cannot move fd 1 away (no dup2), so the shim speaks on the channel
// dlqspec offers (DLQSPEC_PROTOCOL_FD, fd 3) and leaves fd 1 to the student:
// what reaches it below console and process.stdout (fs.writeSync(1, ...), a
// child with stdio 'inherit') dlqspec reads as the spec's stdout. Without the
// offer (an older dlqspec, shims/tests/run.py) replies go to fd 1.
// Everything the student prints through Node (console.log, process.stdout.write,
// console.error...) is kept per stream and sent to dlqspec as `output` messages
// before each world call and reply, so each spec gets what it printed. Each
// buffer is bounded: beyond CAP bytes only the count of what was dropped is kept.
function offeredChannel() {
  const fd = Number(process.env.DLQSPEC_PROTOCOL_FD);
  delete process.env.DLQSPEC_PROTOCOL_FD; // not the student's child processes' business
  if (!Number.isInteger(fd) || fd <= 2) return 1;
  try { fs.fstatSync(fd); return fd; } catch { return 1; }
}
const OUT_FD = offeredChannel();
const CAP = 64 * 1024;
const captures = { stdout: { parts: [], size: 0, cut: 0 }, stderr: { parts: [], size: 0, cut: 0 } };
function capture(name, chunk) {
  const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : String(chunk);
  const c = captures[name];
  const n = Buffer.byteLength(text);
  // Once something is cut, so is all that follows: what is kept is a prefix of the output.
  if (c.cut === 0 && c.size + n <= CAP) { c.parts.push(text); c.size += n; } else c.cut += n;
}
function captureWrite(name) {
  return (chunk, encoding, callback) => {
    capture(name, chunk);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') done();
    return true;
  };
}
const shimSays = (text) => { try { fs.writeSync(2, text); } catch { /* stderr is gone */ } };
process.stderr.write = captureWrite('stderr');
const fakeStdout = Object.create(process.stderr, { write: { value: captureWrite('stdout') } });
Object.defineProperty(process, 'stdout', { configurable: true, enumerable: true, get: () => fakeStdout });
for (const k of ['log', 'info', 'debug']) console[k] = (...a) => capture('stdout', `${format(...a)}\n`);
for (const k of ['error', 'warn', 'trace']) console[k] = (...a) => capture('stderr', `${format(...a)}\n`);
Error.stackTraceLimit = 50;

function flushOutput(seq) {
  for (const [name, c] of Object.entries(captures)) {
    if (c.parts.length === 0 && c.cut === 0) continue;
    const line = JSON.stringify({ seq, type: 'output', stream: name, text: c.parts.join(''), cut: c.cut });
    c.parts = []; c.size = 0; c.cut = 0;
    holdLine(line); // it goes with the world call or reply that follows it
  }
}

const require = createRequire(import.meta.url);
const given = require('./given.cjs');
const GIVEN_PATH = fileURLToPath(new URL('./given.cjs', import.meta.url));

// --- synchronous line I/O ------------------------------------------------
// World calls happen in the middle of the student's synchronous processOne(),
// so the proxy must block until dlqspec answers: stdin is read with readSync,
// never through process.stdin's event-driven stream.
const inBuf = Buffer.alloc(1 << 16);
const decoder = new StringDecoder('utf8');
let buffered = '';
const sleepCell = new Int32Array(new SharedArrayBuffer(4));
const nap = () => Atomics.wait(sleepCell, 0, 0, 1); // only if an fd was left non-blocking (EAGAIN)

function readLine() {
  for (;;) {
    const nl = buffered.indexOf('\n');
    if (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      return line;
    }
    let n;
    try {
      n = fs.readSync(0, inBuf, 0, inBuf.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN') { nap(); continue; }
      if (e.code === 'EOF') n = 0; else throw e;
    }
    if (n === 0) { // EOF: hand out a last unterminated line, then null
      const rest = buffered + decoder.end();
      buffered = '';
      return rest.trim() ? rest : null;
    }
    buffered += decoder.write(inBuf.subarray(0, n));
  }
}

// Output lines held back to go out with the next line written, the world call or reply that
// follows them (one write for both); at exit, what is held goes out.
let held = '';
const holdLine = (text) => { held += `${text}\n`; };
process.on('exit', () => {
  if (held) try { fs.writeSync(OUT_FD, held); } catch { /* dlqspec is gone */ }
});

// Writes the held lines and this one.
function writeLine(text) {
  const buf = Buffer.from(`${held}${text}\n`);
  held = '';
  for (let off = 0; off < buf.length;) {
    try {
      off += fs.writeSync(OUT_FD, buf, off);
    } catch (e) {
      if (e.code === 'EPIPE') process.exit(0); // dlqspec is gone (as with EOF); not the solution's error to catch
      if (e.code !== 'EAGAIN') throw e;
      nap();
    }
  }
}

// dlqspec broke the protocol: nothing sensible can be replied, so say why on stderr and stop.
function die(why) {
  shimSays(`dlqspec-shim: protocol error: ${why}\n`);
  process.exit(2);
}

// Next message from dlqspec as { msg, line } (the line is kept for foresight: see foreseenArgs),
// or null at EOF.
function readMessage() {
  for (;;) {
    const line = readLine();
    if (line === null) return null;
    if (!line.trim()) continue;
    let msg;
    try { msg = JSON.parse(line); } catch { die(`not JSON: ${line.slice(0, 200)}`); }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) die(`not a JSON object: ${line.slice(0, 200)}`);
    return { msg, line };
  }
}

// The answer (result or raise) to the world call being waited on.
function readAnswer() {
  const got = readMessage();
  if (got === null) process.exit(0); // dlqspec hung up mid-call: it has given up on this run
  return got.msg;
}

// --- world calls ---------------------------------------------------------
// { seq, seqText, n, foresee, line, exact } while a `new` or `call` is being served: foresee is
// the request's list of foreseen answers while every world call so far was answered from it
// (null once one was not), line the request's JSON text and exact its foresee read from it
// exactly (see foreseenArgs).
let current = null;

function worldCall(call, args) {
  if (!current) throw new Error(`${call}() called outside a dlqspec request (e.g. at import time)`);
  const n = current.n + 1;
  const argsText = JSON.stringify(args); // may throw (BigInt...): before n moves
  const head = `{"seq":${current.seqText},"type":"world","n":${n},"call":${JSON.stringify(call)},"args":${argsText}`;
  current.n = n;
  flushOutput(current.seq);
  const foreseen = current.foresee === null ? undefined : current.foresee[n - 1];
  if (foreseen?.call === call && foreseenArgs(n - 1) === canonicalArgs(argsText)) {
    // dlqspec knows the answer and sends none: the call costs no round trip. It is written at
    // once all the same, so the world sees it when it is made, even by a process killed next.
    writeLine(`${head},"foreseen":true}`);
    if (Object.hasOwn(foreseen, 'raise')) throw errorFromWire(foreseen.raise ?? {});
    // Fresh: each entry is parsed from the request's line and answers one call only.
    return foreseen.value ?? null;
  }
  current.foresee = null; // the first call not foreseen ends foresight for this request
  writeLine(`${head}}`);
  const reply = readAnswer();
  if (reply.seq !== current.seq || reply.n !== n || (reply.type !== 'result' && reply.type !== 'raise')) {
    die(`expected result/raise for seq ${current.seq} n ${n}, got ${JSON.stringify(reply).slice(0, 200)}`);
  }
  if (reply.type === 'result') return reply.value ?? null;
  throw errorFromWire(reply.error ?? {});
}

// --- foresight: a foreseen call's args must equal the call's exactly as JSON ---------------
// Equal as canonical JSON texts: object keys sorted, no whitespace, and numbers as written, so
// 1 and 1.0 differ (Python reads them as int and float). JSON.parse reads 1.0 as 1, so when a
// request's line holds an integral number written with a fraction or exponent (1.0, 1e2), its
// foresee is read again with each such number replaced by a string no call's args hold (the
// mark has a nonce): JavaScript writes no number so, hence no call's args equal those.
const FLOAT_MARK = `\u0000float${Math.random().toString(36).slice(2)}:`;
const INTEGRAL_FLOAT = /\d(?:\.0+(?!\d)|[eE])/; // may also match inside a string: then the slower path is taken

// A number token of a JSON text, marked when it is integral and written with a fraction or exponent.
function markIntegralFloat(token) {
  if (!/[.eE]/.test(token)) return token;
  const value = Number(token);
  return Number.isFinite(value) && !Number.isInteger(value) ? token : JSON.stringify(FLOAT_MARK + token);
}

// A JSON text with each of its number tokens through markIntegralFloat: a scan that skips strings
// (a regular expression's backtracking overflows on a long string of escapes).
function markIntegralFloats(text) {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) { // '"': on to the quote that ends the string, one not escaped by a backslash
      for (i = text.indexOf('"', i + 1); i > 0; i = text.indexOf('"', i + 1)) {
        let slashes = 0;
        while (text.charCodeAt(i - 1 - slashes) === 92) slashes++;
        if (slashes % 2 === 0) break;
      }
      if (i < 0) break;
    } else if (c === 45 || (c >= 48 && c <= 57)) { // '-' or a digit: a number to its end
      let end = i + 1;
      for (let d = text.charCodeAt(end); (d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45; d = text.charCodeAt(++end));
      const token = text.slice(i, end);
      const marked = markIntegralFloat(token);
      if (marked !== token) {
        out += text.slice(from, i) + marked;
        from = end;
      }
      i = end - 1;
    }
  }
  return out + text.slice(from);
}

// The canonical JSON of a value parsed from JSON.
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

// A call's args as canonical JSON: JSON.stringify's text is already canonical without objects.
function canonicalArgs(argsText) {
  if (!argsText.includes('{')) return argsText;
  try { return canonicalJson(JSON.parse(argsText)); } catch { return null; } // too deep to walk: not foreseen
}

// The canonical JSON of the args of the request's foreseen entry at index, worked out only when
// a call's name matches the entry's.
function foreseenArgs(index) {
  try {
    if (current.exact === undefined) {
      current.exact = INTEGRAL_FLOAT.test(current.line) ? JSON.parse(markIntegralFloats(current.line)).foresee : null;
    }
    return canonicalJson((current.exact ?? current.foresee)[index].args);
  } catch {
    return undefined; // too deep to walk: not foreseen (never the solution's error to catch)
  }
}

// An Error subclass whose `name` is the class name, so `${e.name}: ${e.message}` gives
// "NAME: message" as a contract's entries write an error.
function errorClass(name, Base = Error) {
  const C = { [name]: class extends Base {} }[name];
  Object.defineProperty(C.prototype, 'name', { value: name, writable: true, configurable: true });
  return C;
}

// The base of a crash the world raises under a name no contract declares. JavaScript has no
// BaseException: a crash is an ordinary Error the solution must rethrow.
const UndeclaredCrash = errorClass('UndeclaredCrash');

// Classes made up for names JavaScript does not have, kept so each name is one class across calls.
const madeErrors = new Map();
// Every contract's errors by name, from hello; those a world `raise` may name in `extends`
// (it then stands for a subclass of it); those that are crashes (`base: crash`).
const GIVEN_ERRORS = Object.create(null);
const SUBCLASSABLE = Object.create(null);
const CRASHES = [UndeclaredCrash];

// The crash error the contract of the current instance declares, else the shim's own: what an
// unknown crash extends, so that it is one.
function crashBase() {
  for (const [cls, error] of Object.entries(CONTRACTS.get(serving)?.errors ?? {})) {
    if (error?.base === 'crash' && Object.hasOwn(GIVEN_ERRORS, cls)) return GIVEN_ERRORS[cls];
  }
  return UndeclaredCrash;
}

function errorFromWire(err) {
  const name = String(err.class ?? 'Error');
  const message = String(err.message ?? '');
  if (typeof err.extends === 'string' && Object.hasOwn(SUBCLASSABLE, err.extends)) {
    // A real subclass, so `instanceof` the given error holds and `e.name` names the subclass.
    const key = `${err.extends}:${name}`;
    if (!madeErrors.has(key)) madeErrors.set(key, errorClass(name, SUBCLASSABLE[err.extends]));
    return new (madeErrors.get(key))(message);
  }
  let C = Object.hasOwn(GIVEN_ERRORS, name) ? GIVEN_ERRORS[name] : undefined;
  const builtin = globalThis[name];
  if (!C && typeof builtin === 'function' && (builtin === Error || builtin.prototype instanceof Error)) C = builtin;
  if (!C) {
    // An unknown crash must still behave like one, so it derives from a crash.
    const Base = err.kind === 'crash' ? crashBase() : Error;
    const key = `${err.kind === 'crash' ? `crash:${Base.name}` : 'error'}:${name}`;
    if (!madeErrors.has(key)) madeErrors.set(key, errorClass(name, Base));
    C = madeErrors.get(key);
  }
  return C === AggregateError ? new C([], message) : new C(message);
}

// --- loading the solution ------------------------------------------------
// The TypeScript transform the shim carries (typescript.cjs), when it is the one that runs the
// solution's .ts files: a Node before 22.7 without tsx.
let typescript = null;

// The ES module an `import` of `given` gets: a data: URL (one URL, so one module however many
// files import it) whose module exports given.cjs's object as its default and each name hello
// gave `given` by name, its classes and its type-only names (with no value: Node's TypeScript
// transform keeps an `import { T }` of a type as written). A CommonJS module's named exports
// are only those Node finds in its text, and given.cjs's names are added at run time: so the
// facade writes them out, once hello has said them, before the solution loads.
function givenFacade() {
  let source = "const given = globalThis[Symbol.for('dlqspec.given')];\nexport default given;\n";
  [...GIVEN_NAMES].filter((n) => n !== 'default' && IDENTIFIER.test(n)).forEach((n, i) => {
    source += `const v${i} = given[${JSON.stringify(n)}];\nexport { v${i} as ${n} };\n`;
  });
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

function installGivenRedirect() {
  // CommonJS: require('./given') anywhere outside node_modules gets the shim's given.cjs.
  const original = Module._resolveFilename;
  Module._resolveFilename = function (request, parent, ...rest) {
    if (GIVEN_SPECIFIER.test(request) && !parent?.filename?.includes(`${path.sep}node_modules${path.sep}`)) return GIVEN_PATH;
    return original.call(this, request, parent, ...rest);
  };
  // ESM: the same for import, to the facade, in this thread where it can be, else by a resolve
  // hook (registered last, so it runs before tsx's); with it, the carried TypeScript
  // transform's load hook.
  const givenUrl = givenFacade();
  if (!redirectInThisThread(givenUrl)) {
    register('./given-hooks.mjs', import.meta.url, { data: { givenUrl, typescript: typescript !== null } });
  }
}

// A load hook's answer for a TypeScript file when the shim transforms it, else undefined.
const loadTypeScript = (url) => (typescript !== null && url.startsWith('file:') && typescript.isTypeScript(url) ? typescript.load(url) : undefined);

// module.register() hooks run on a thread of their own, whose start is about 20 ms of every
// run on Node 20 and 25 ms on 22 (docs/performance.md, "Starting the Node shim"). So `given` is
// redirected in this thread where Node allows it, asking redirectsToGiven as the hook does:
// through module.registerHooks (Node 22.15 and 23.5 on), else on Node 20 started with
// --expose-internals (as dlqspec starts it) by wrapping the ES module loader's default
// resolution (the loader this was written and tested against). Either must then answer `given`
// as the hook would, or it is undone and the hook used: a loader with hooks of its own (a
// user's --import) resolves on their thread, where the wrap is never asked. The TypeScript
// transform's load goes the same way as the resolution.
function redirectInThisThread(givenUrl) {
  const answersGiven = () => {
    try { return import.meta.resolve('given') === givenUrl; } catch { return false; }
  };
  if (typeof Module.registerHooks === 'function') {
    const hooks = Module.registerHooks({
      resolve(specifier, context, nextResolve) {
        if (redirectsToGiven(specifier, context.parentURL)) return { url: givenUrl, format: 'module', shortCircuit: true };
        return nextResolve(specifier, context);
      },
      load(url, context, nextLoad) {
        return loadTypeScript(url) ?? nextLoad(url, context);
      },
    });
    if (answersGiven()) return true;
    hooks.deregister();
    return false;
  }
  if (!process.execArgv.includes('--expose-internals') || process.versions.node.split('.')[0] !== '20') return false;
  let loader;
  try {
    loader = require('internal/modules/esm/loader').getOrInitializeCascadedLoader();
  } catch {
    return false;
  }
  const original = loader?.defaultResolve;
  const originalLoad = loader?.load;
  if (typeof original !== 'function' || typeof originalLoad !== 'function' || Object.hasOwn(loader, 'defaultResolve') || Object.hasOwn(loader, 'load')) return false;
  loader.defaultResolve = function defaultResolve(specifier, parentURL, importAttributes) {
    if (redirectsToGiven(specifier, parentURL)) return { url: givenUrl, format: 'module' };
    return original.call(this, specifier, parentURL, importAttributes);
  };
  if (typescript !== null) {
    loader.load = async function load(url, context) {
      const loaded = loadTypeScript(url);
      return loaded === undefined ? originalLoad.call(this, url, context) : { ...loaded, responseURL: url };
    };
  }
  if (answersGiven()) return true;
  delete loader.defaultResolve;
  delete loader.load;
  return false;
}

// --- TypeScript ----------------------------------------------------------
// tsx is looked for where the student has it: the solution's own project (its node_modules,
// or a parent's), then a `tsx` command on PATH, then beside the shim (a clone's shims/node
// after `npm ci`). Without tsx, Node's own transform runs the file where this Node has it
// (22.7 and later: dlqspec gives it --experimental-transform-types); else the transform the
// shim carries (typescript.cjs), the same as Node's. dlqspec's src/external/typescript.rs looks
// for tsx in the same order, to know which Node flags to give and what the box must let be read.

// The folder of the tsx package a require from `from` (a file path) finds, or null.
function tsxFrom(from) {
  try {
    return path.dirname(createRequire(from).resolve('tsx/package.json'));
  } catch {
    return null;
  }
}

// The folder of the tsx package behind a `tsx` command on PATH, or null.
function tsxOnPath() {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    let real;
    try { real = fs.realpathSync(path.join(dir, 'tsx')); } catch { continue; }
    // node_modules/.bin/tsx and a global bin/tsx link to .../tsx/dist/cli.mjs.
    for (let up = path.dirname(real), n = 0; n < 4 && up !== path.dirname(up); up = path.dirname(up), n++) {
      try {
        if (JSON.parse(fs.readFileSync(path.join(up, 'package.json'), 'utf8')).name === 'tsx') return up;
      } catch { /* no package.json here: go up */ }
    }
  }
  return null;
}

// The file that `pkg/subpath` names for `condition` (import or require), from the package's
// "exports".
function exportTarget(pkgDir, subpath, condition) {
  const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  let target = manifest.exports?.[subpath];
  while (target && typeof target === 'object') target = target[condition] ?? target.default;
  if (typeof target !== 'string') throw new Error(`no \`${subpath}\` export`);
  return path.join(pkgDir, target);
}

// Whether this Node runs .ts files itself: it transforms them when started with
// --experimental-transform-types (as dlqspec starts Node 22.7 and later), and strips their types
// from 22.18 and 23.6 on (process.features.typescript, from 22.10), or when asked for with
// --experimental-strip-types.
function nodeRunsTypeScript() {
  if (process.features.typescript) return true;
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return flags.some((flag) => flag === '--experimental-strip-types' || flag === '--experimental-transform-types');
}

async function registerTypeScript(file) {
  const tsxDir = tsxFrom(path.resolve(file)) ?? tsxOnPath() ?? tsxFrom(fileURLToPath(import.meta.url));
  if (tsxDir === null) {
    if (nodeRunsTypeScript()) return;
    typescript = require('./typescript.cjs');
    typescript.installCommonJs();
    return;
  }
  try {
    const esm = await import(pathToFileURL(exportTarget(tsxDir, './esm/api', 'import')).href);
    const cjs = require(exportTarget(tsxDir, './cjs/api', 'require'));
    esm.register();
    cjs.register();
  } catch (e) {
    throw Object.assign(new Error(`the tsx at ${tsxDir} does not load (${e.message})`), { notStudent: true });
  }
}

async function loadSolution(file) {
  if (/\.[cm]?ts$/.test(file)) await registerTypeScript(file);
  installGivenRedirect();
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    typescript?.done();
  }
}

// The `errored` fields for a solution that failed to load: message, file/line in the student's
// code when known, and as details the message with the frames in the student's own files (as
// Python's shim does: none of the shim's, tsx's or node:internal's).
function describeLoadError(e, file) {
  // Not the student's doing (a tsx that does not load): said without the shim's own frames.
  if (e?.notStudent) return { message: e.message };
  const where = (message, frames) => {
    const fields = { message, details: framesText(message, frames) };
    if (frames.length > 0) Object.assign(fields, { file: frames[0].file, line: frames[0].line });
    return fields;
  };
  const at = (f, line) => {
    const frame = { file: path.resolve(f), line };
    const source = sourceLine(frame.file, line);
    if (source !== undefined) frame.source = source;
    return [frame];
  };
  // esbuild (via tsx) fails TypeScript with "Transform failed with 1 error:\n/abs/x.ts:6:11: ERROR: Unexpected ..."
  const esb = /^(\/.*?):(\d+):\d+: ERROR: (.*)$/m.exec(String(e?.message ?? ''));
  if (esb) return where(`SyntaxError: ${esb[3]}`, at(esb[1], Number(esb[2])));
  // Node 22.7 to 22.1x throw swc's report itself, a string: "  x Expected ',', got '{'\n   ,-[6:1]\n ... 6 | the line". It
  // names no file: it is the solution's when its line there is the one shown.
  const swc = typeof e === 'string' ? /^\s*x (.*)\n\s*,-\[(\d+):\d+\]/.exec(e) : null;
  if (swc) {
    const line = Number(swc[2]);
    const shown = new RegExp(`^\\s*${line} \\|(.*)$`, 'm').exec(e)?.[1]?.trim();
    const message = `SyntaxError: ${swc[1]}`;
    return shown !== undefined && shown === sourceLine(file, line) ? where(message, at(file, line)) : { message, details: e };
  }
  const stack = String(e?.stack ?? e);
  const message = `${e?.name ?? 'Error'}: ${e?.message ?? e}`;
  // A CommonJS SyntaxError's stack starts with "/abs/sol.js:12" above the code excerpt.
  const head = /^(file:\/\/\S+|\/\S+):(\d+)\n/.exec(stack);
  if (head) return where(message, at(head[1].startsWith('file:') ? fileURLToPath(head[1]) : head[1], Number(head[2])));
  // An ES module's SyntaxError carries no location at all (Node adds one only when the error
  // is fatal), so ask `node --check` to parse the solution as a module once more.
  if (e?.name === 'SyntaxError') {
    // child_process is loaded here, the one place it is needed, rather than in every start.
    const check = require('node:child_process').spawnSync(process.execPath, ['--input-type=module', '--check'], { input: fs.readFileSync(file), encoding: 'utf8' });
    const line = /^\[stdin\]:(\d+)/.exec(check.stderr ?? '');
    if (line) return where(message, at(file, Number(line[1])));
  }
  // A missing import: the line of the importing file that names it.
  const missing = /^Cannot find (?:module|package) '([^']+)' imported from (\/.+)$/.exec(String(e?.message ?? ''));
  if (missing && isStudents(missing[2])) {
    const wanted = missing[1].startsWith('/') ? path.basename(missing[1]) : missing[1];
    const lines = (sourceLine(missing[2], 1), sources.get(missing[2])) ?? [];
    const index = lines.findIndex((text) => text.includes(wanted));
    if (index >= 0) return where(message, at(missing[2], index + 1));
  }
  // A throw at import: the stack's frames in the student's files (source-mapped under tsx).
  return where(message, traceback(e));
}

// An error and its frames as text, the way reports show a traceback.
function framesText(head, frames) {
  let text = `${head}\n`;
  for (const f of frames) text += `  at ${f.file}:${f.line}${f.function ? ` in ${f.function}` : ''}\n${f.source ? `    ${f.source}\n` : ''}`;
  return text;
}

// --- requests ------------------------------------------------------------
// The contracts name methods and keys in snake_case; JavaScript spells them in camelCase.
const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
// The name under which `target` has the method the contract calls `name`: its camelCase
// spelling, else the name as the contract writes it (a solution may keep `from_snapshot`).
// A name beginning with `_` is no method the contract calls.
function spelledMethod(target, name) {
  const spelled = camel(name);
  if (name.startsWith('_') || spelled.startsWith('_')) return undefined;
  if (typeof target?.[spelled] === 'function' || typeof target?.[name] !== 'function') return spelled;
  return name;
}
// A reply the shim cannot give (no such method, bad mutate_state path...): becomes `errored`.
class ShimError extends Error {}

function findClass(ns, name) {
  // ESM named export, CommonJS module.exports.X (surfaces as default), or `export default class X`
  // (in ESM, or compiled to CommonJS by tsx, where it lands on module.exports.default).
  for (const c of [ns?.[name], ns?.default?.[name]]) if (typeof c === 'function') return c;
  for (const d of [ns?.default, ns?.default?.default]) if (typeof d === 'function' && d.name === name) return d;
  return undefined;
}

// The names the solution exports, to tell a file without the contract's class what it does have.
function exportedNames(ns) {
  const names = new Set(Object.keys(ns ?? {}).filter((k) => k !== 'default' && k !== '__esModule'));
  const d = ns?.default;
  if (typeof d === 'function' && d.name) names.add(d.name);
  else if (d && typeof d === 'object') {
    for (const k of Object.keys(d)) if (k !== '__esModule' && k !== 'default') names.add(k);
    if (typeof d.default === 'function' && d.default.name) names.add(d.default.name);
  }
  return [...names].sort();
}

// --- tracebacks into the student's files ----------------------------------
const SHIM_DIR = path.dirname(fileURLToPath(import.meta.url));
let solutionDir = null;
const sources = new Map(); // file -> its lines, read once

function isStudents(file) {
  const abs = path.resolve(file);
  return solutionDir !== null && abs.startsWith(solutionDir + path.sep) && !abs.startsWith(SHIM_DIR + path.sep)
    && !abs.split(path.sep).includes('node_modules');
}

function sourceLine(file, line) {
  if (!sources.has(file)) {
    let lines = null;
    try {
      if (fs.statSync(file).size <= (1 << 20)) lines = fs.readFileSync(file, 'utf8').split(/\r?\n/);
    } catch { /* gone or unreadable: no source line */ }
    sources.set(file, lines);
  }
  const text = sources.get(file)?.[line - 1];
  return text === undefined ? undefined : text.trim().slice(0, 300);
}

// The frames of an error's stack in the student's files, innermost first. Under tsx, stacks
// are source-mapped, so a TypeScript frame names the .ts file and its line.
function traceback(e) {
  const stack = typeof e?.stack === 'string' ? e.stack : '';
  const frames = [];
  for (const text of stack.split('\n')) {
    const m = /^\s*at (?:(.*?) \()?(.+?):(\d+):(\d+)\)?$/.exec(text);
    if (!m) continue;
    let file = m[2];
    if (file.startsWith('file://')) {
      try { file = fileURLToPath(file); } catch { continue; }
    }
    if (!path.isAbsolute(file) || !isStudents(file)) continue;
    const frame = { file: path.resolve(file), line: Number(m[3]) };
    // tsx runs a TypeScript module's top level as `<anonymous>` inside CommonJS's module
    // function (`Object.<anonymous>`), whose mapped line is the file's last: not a place to show.
    const last = frames[frames.length - 1];
    if (m[1] === 'Object.<anonymous>' && last?.file === frame.file && last.topLevel) continue;
    // Top-level code has no function name.
    // A callback's frame says how Node called it (`Timeout.f [as _onTimeout]`): the name is `f`.
    const fn = m[1]?.replace(/ \[as [^\]]*\]$/, '').replace(/^(?:Timeout|Immediate)\./, '');
    if (fn && !fn.endsWith('<anonymous>')) frame.function = fn;
    if (m[1] === '<anonymous>') Object.defineProperty(frame, 'topLevel', { value: true }); // not sent
    const source = sourceLine(frame.file, frame.line);
    if (source !== undefined) frame.source = source;
    frames.push(frame);
    if (frames.length === 40) break;
  }
  return frames;
}

// Errors thrown by callbacks (timers, promises) that ran after a call returned, with no one to
// catch them. Caught whenever they happen (rather than ending the process), and told as the
// `errored` reply of the request being served when they surface: the call's own, or the next
// one's if they surface later (the shim runs the event loop only while serving a request).
const asyncErrors = [];
let asyncErrorsCut = 0;
const keepAsyncError = (what, e) => {
  if (asyncErrors.length < 8) asyncErrors.push([what, e]); else asyncErrorsCut += 1;
};
process.on('uncaughtException', (e) => keepAsyncError('uncaught exception', e));
process.on('unhandledRejection', (e) => keepAsyncError('unhandled promise rejection', e));
// A timer of 0 ms set by the call fires before this one, and an immediate after both; with no
// timer pending, an immediate will do (a timer costs a millisecond a call).
const timersPending = () => typeof process.getActiveResourcesInfo !== 'function' || process.getActiveResourcesInfo().includes('Timeout');
const turn = () => new Promise((resolve) => {
  if (timersPending()) setTimeout(() => setImmediate(resolve), 0); else setImmediate(resolve);
});

// The `errored` reply telling the errors caught since the last reply, or null when none was.
function asyncErrorReply() {
  if (asyncErrors.length === 0) return null;
  const told = asyncErrors.splice(0).map(([what, e]) => {
    const head = e instanceof Error ? `${e.name}: ${e.message}` : `${typeof e}: ${String(e)}`;
    return { head: `${what} after a call returned: ${head.slice(0, 2000)}`, frames: traceback(e) };
  });
  const more = told.length - 1 + asyncErrorsCut;
  asyncErrorsCut = 0;
  const msg = { type: 'errored', message: told[0].head + (more > 0 ? ` (and ${more} more)` : '') };
  if (told[0].frames.length > 0) msg.traceback = told[0].frames;
  if (told.length > 1) msg.details = told.map((t) => framesText(t.head, t.frames)).join('');
  return msg;
}

// The lesson's invalid-argument error in JavaScript is RangeError; a TypeError is another error.
function errorKind(e) {
  if (CRASHES.some((C) => e instanceof C)) return 'crash';
  if (e instanceof RangeError) return 'invalid_argument';
  return 'error';
}

// --- the contracts hello describes ------------------------------------------
// Every contract is described in hello (`exercises`): its class, its given parts and its
// errors. The shim knows none by name: it adds each contract's errors and part classes to
// `given` before the solution loads, and makes the given parts from the description.
const CONTRACTS = new Map(); // name -> {class, given, errors, types}, from hello
const GIVEN_NAMES = new Set(); // the names `given` exports, for the ES module facade
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
let serving = null; // the contract of the current instance

// --- a view's keys of more than one word -----------------------------------------
// An exercise declares them in snake_case (`dead_letter`), as its specs write them; a
// JavaScript solution may write their camelCase spelling (`deadLetter`). What a view returns
// is handed back with each such key as declared, wherever the object has no key of that name
// already; a `mutate_VIEW` path may name the declared key of an object that has the camelCase
// one. A spelling is used only when one declared key has it and it is no declared key itself.
const VIEW_KEYS = new Map(); // contract -> Map(view -> {toDeclared, toCamel}), from hello

function viewKeys(views) {
  const byView = new Map();
  if (views === null || typeof views !== 'object') return byView;
  for (const [view, keys] of Object.entries(views)) {
    const declared = new Set((Array.isArray(keys) ? keys : []).filter((k) => typeof k === 'string'));
    const toDeclared = new Map();
    const ambiguous = new Set();
    for (const key of declared) {
      const spelled = camel(key);
      if (spelled === key) continue;
      if (declared.has(spelled) || toDeclared.has(spelled)) ambiguous.add(spelled);
      else toDeclared.set(spelled, key);
    }
    for (const spelled of ambiguous) toDeclared.delete(spelled);
    if (toDeclared.size === 0) continue;
    const toCamel = new Map([...toDeclared].map(([spelled, key]) => [key, spelled]));
    byView.set(view, { toDeclared, toCamel });
  }
  return byView;
}

// The keys of the view `view` of the current instance's contract, or undefined when none of
// them has another spelling.
const keysOf = (view) => VIEW_KEYS.get(serving)?.get(view);

// `value` with each camelCase key `keys` knows renamed as declared, where its object has no
// key of the declared name: a new object where one changes (the solution's own is left as it
// is), the same value where none does. A value that cannot be walked (a cycle, too deep) is
// handed back as it is, and its serialisation tells what is wrong with it.
function asDeclared(value, keys) {
  const walking = new Set();
  const walk = (v) => {
    if (v === null || typeof v !== 'object' || walking.has(v) || typeof v.toJSON === 'function') return v;
    walking.add(v);
    try {
      if (Array.isArray(v)) {
        const out = v.map(walk);
        return out.some((item, i) => item !== v[i]) ? out : v;
      }
      let changed = false;
      const out = {};
      for (const [key, item] of Object.entries(v)) {
        const declared = keys.toDeclared.get(key);
        const name = declared !== undefined && !Object.hasOwn(v, declared) ? declared : key;
        const walked = walk(item);
        if (name !== key || walked !== item) changed = true;
        // Defined, not assigned: a key `__proto__` is data, not the object's prototype.
        Object.defineProperty(out, name, { value: walked, enumerable: true, writable: true, configurable: true });
      }
      return changed ? out : v;
    } finally {
      walking.delete(v);
    }
  };
  try { return walk(value); } catch { return value; }
}

// The key of `obj` a `mutate_VIEW` path's `key` names: the camelCase spelling of a declared
// key where the object has that and not the key as written.
function keyIn(obj, key, keys) {
  if (keys === undefined || typeof key !== 'string' || obj === null || typeof obj !== 'object' || Object.hasOwn(obj, key)) return key;
  const spelled = keys.toCamel.get(key);
  return spelled !== undefined && Object.hasOwn(obj, spelled) ? spelled : key;
}

function partClass(cls, part, methods) {
  const C = class {};
  Object.defineProperty(C, 'name', { value: String(cls) });
  for (const m of Array.isArray(methods) ? methods : []) {
    if (typeof m !== 'string') continue;
    const call = function (...args) { return worldCall(`${part}.${m}`, args); };
    C.prototype[camel(m)] = call;
    if (camel(m) !== m) C.prototype[m] = call; // the contract's own spelling, too
  }
  Object.defineProperty(C.prototype, '_dlqspecPart', { value: part });
  return C;
}

function learnContracts(contracts) {
  if (contracts === null || typeof contracts !== 'object') return;
  for (const [name, described] of Object.entries(contracts)) {
    if (described === null || typeof described !== 'object' || typeof described.class !== 'string') continue;
    CONTRACTS.set(name, described);
    for (const [cls, error] of Object.entries(described.errors ?? {})) {
      if (!IDENTIFIER.test(cls) || Object.hasOwn(GIVEN_ERRORS, cls) || Object.hasOwn(given, cls)) continue;
      const C = errorClass(cls, Error);
      GIVEN_ERRORS[cls] = C;
      SUBCLASSABLE[cls] = C;
      if (error?.base === 'crash') CRASHES.push(C);
      given[cls] = C;
      GIVEN_NAMES.add(cls);
    }
    for (const [part, d] of Object.entries(described.given ?? {})) {
      if (d && !d.callable && typeof d.class === 'string' && IDENTIFIER.test(d.class) && !Object.hasOwn(given, d.class)) {
        given[d.class] = partClass(d.class, part, d.methods);
        GIVEN_NAMES.add(d.class);
      }
    }
    VIEW_KEYS.set(name, viewKeys(described.views));
    for (const type of Array.isArray(described.types) ? described.types : []) {
      if (typeof type === 'string' && IDENTIFIER.test(type) && !Object.hasOwn(given, type)) {
        given[type] = undefined;
        GIVEN_NAMES.add(type);
      }
    }
  }
}

function givenPart(contract, part) {
  const d = CONTRACTS.get(contract)?.given?.[part];
  if (d === null || typeof d !== 'object') throw new ShimError(`the contract ${JSON.stringify(contract)} has no given part ${JSON.stringify(part)}`);
  if (d.callable) return (...args) => worldCall(part, args);
  const C = typeof d.class === 'string' && given[d.class]?.prototype?._dlqspecPart === part ? given[d.class] : partClass(d.class ?? part, part, d.methods);
  return new C();
}

// `new`: the class from `class`, its arguments from args.params, each a value or a given part.
function makeInstance(req, solution, name) {
  if (typeof req.class !== 'string') throw new ShimError('new names no class: the shim knows no contract by name');
  serving = req.contract;
  const C = findClass(solution, req.class);
  if (!C) return { skipped: `${name} defines no ${req.class}` };
  const args = req.args ?? {};
  const params = (Array.isArray(args.params) ? args.params : []).map((p) => {
    if (p !== null && typeof p === 'object' && Object.hasOwn(p, 'given')) return givenPart(req.contract, p.given);
    if (p !== null && typeof p === 'object') return p.value;
    throw new ShimError(`new: a parameter is {value} or {given}, not ${JSON.stringify(p)?.slice(0, 100)}`);
  });
  if (args.factory === undefined || args.factory === null) return { instance: new C(...params) };
  const factory = spelledMethod(C, String(args.factory));
  if (factory === undefined || typeof C[factory] !== 'function') throw new ShimError(`${req.class} has no static ${camel(String(args.factory))}() to make an instance from a snapshot`);
  const made = C[factory](...params);
  if (!(made instanceof C)) {
    const what = made === null || typeof made !== 'object' ? String(made).slice(0, 60) : `an instance of ${String(made.constructor?.name || 'Object').slice(0, 60)}`;
    throw new ShimError(`${req.class}.${factory}() returned ${what}, not the ${req.class} it makes from the snapshot: end it with \`return\` of the instance it makes`);
  }
  return { instance: made };
}

function step(obj, key, keys) {
  key = keyIn(obj, key, keys);
  const ok = Array.isArray(obj)
    ? Number.isInteger(key) && key >= 0 && key < obj.length
    : obj !== null && typeof obj === 'object' && typeof key === 'string' && Object.hasOwn(obj, key);
  if (!ok) throw new ShimError(`mutate_state: no ${JSON.stringify(key)} in ${JSON.stringify(obj)?.slice(0, 100)}`);
  return obj[key];
}

// Apply mutate_state ops to the object state() returned, in place (proving state() is a copy is the point).
// `keys` are the view's keys of more than one word, which a path may name as declared.
function applyOps(root, ops, keys) {
  if (!Array.isArray(ops) || !ops.every((op) => op !== null && typeof op === 'object')) {
    throw new ShimError(`mutate_state wants a list of ops, got ${JSON.stringify(ops)?.slice(0, 100)}`);
  }
  for (const op of ops) {
    const p = Array.isArray(op.path) ? op.path : [];
    const whole = op.op === 'append' || op.op === 'clear'; // these act on the container the path names
    if (!whole && p.length === 0) throw new ShimError(`mutate_state: ${JSON.stringify(op.op)} needs a non-empty path`);
    const target = (whole ? p : p.slice(0, -1)).reduce((obj, key) => step(obj, key, keys), root);
    const key = keyIn(target, p[p.length - 1], keys);
    if (target === null || typeof target !== 'object') throw new ShimError(`mutate_state: ${JSON.stringify(p)} is not inside an object or list`);
    if (op.op === 'set') {
      if (Array.isArray(target)) step(target, key);
      target[key] = op.value;
    } else if (op.op === 'delete') {
      step(target, key);
      if (Array.isArray(target)) target.splice(key, 1); else delete target[key];
    } else if (op.op === 'append' && Array.isArray(target)) {
      target.push(op.value);
    } else if (op.op === 'clear') {
      if (Array.isArray(target)) target.length = 0; else for (const k of Object.keys(target)) delete target[k];
    } else {
      throw new ShimError(`mutate_state: cannot ${JSON.stringify(op.op)} at ${JSON.stringify(p)}`);
    }
  }
  return null;
}

// The first part of `value` that JSON.stringify would carry as an empty `{}`, its contents lost:
// a Map, a Set or their weak kinds, with where it is (`.keys[0]`); undefined when there is none.
// An instance of the solution's own class is data like any object (JSON carries its fields,
// and the spec compares those), a value that says how it is written (`toJSON`, as a Date does)
// is its author's choice, and a cycle is left to JSON.stringify, which tells it.
function notPlain(value) {
  const walking = new Set();
  const shown = (key) => (/^[A-Za-z_$][\w$]{0,39}$/.test(key) ? `.${key}` : `[${JSON.stringify(key.slice(0, 40))}]`);
  const walk = (v, at) => {
    if (v === null || typeof v !== 'object' || typeof v.toJSON === 'function' || walking.has(v)) return undefined;
    walking.add(v);
    try {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const found = walk(v[i], `${at}[${i}]`);
          if (found !== undefined) return found;
        }
        return undefined;
      }
      if (v instanceof Map) return { what: 'a Map', at };
      if (v instanceof Set) return { what: 'a Set', at };
      if (v instanceof WeakMap) return { what: 'a WeakMap', at };
      if (v instanceof WeakSet) return { what: 'a WeakSet', at };
      for (const [key, item] of Object.entries(v)) {
        const found = walk(item, `${at}${shown(key)}`);
        if (found !== undefined) return found;
      }
      return undefined;
    } finally {
      walking.delete(v);
    }
  };
  try { return walk(value, ''); } catch { return undefined; }
}

function callMethod(instance, method, args) {
  if (method === 'mutate_state') return applyOps(instance.state(), args[0], keysOf('state'));
  if (method === 'mutate_view') { // a deep-copied view of the instance: args are [view, ops]
    const view = spelledMethod(instance, String(args[0]));
    if (view === undefined || typeof instance[view] !== 'function') throw new ShimError(`${instance.constructor.name} has no method ${camel(String(args[0]))}()`);
    return applyOps(instance[view](), args[1], keysOf(String(args[0])));
  }
  const name = spelledMethod(instance, String(method));
  const fn = name === undefined || name === 'constructor' ? undefined : instance[name];
  if (typeof fn !== 'function') throw new ShimError(`${instance.constructor.name} has no method ${camel(String(method))}()`);
  const value = fn.apply(instance, args);
  if (typeof value?.then === 'function') throw new ShimError(`${name}() returned a Promise; the contract's methods are synchronous`);
  const odd = notPlain(value);
  if (odd !== undefined) {
    throw new ShimError(`${name}() returned ${odd.what}${odd.at ? ` at ${odd.at.slice(0, 200)}` : ''}, which JSON would carry as {}: return plain objects/arrays (Object.fromEntries(map), [...set])`);
  }
  const keys = keysOf(String(method));
  return keys === undefined ? value : asDeclared(value, keys);
}

async function main(solution, loadError, file, first) {
  const name = path.basename(file);
  let instance = null;
  let pending = first;
  for (;;) {
    const got = pending ?? readMessage();
    pending = null;
    if (got === null) process.exit(0);
    const req = got.msg;
    const seq = req.seq;
    const reply = (msg) => writeLine(JSON.stringify({ seq, ...msg }));
    if (req.type === 'hello') {
      if (loadError) { reply({ type: 'errored', ...loadError }); continue; }
      reply({
        type: 'hello', protocol: PROTOCOL,
        implementation: { name, language: /\.[cm]?ts$/.test(file) ? 'typescript' : 'javascript', version: process.versions.node },
        contracts: [...CONTRACTS].filter(([, d]) => findClass(solution, d.class)).map(([c]) => c),
        defines: exportedNames(solution),
        naming: 'camelCase',
        features: ['foresight'],
      });
      continue;
    }
    if (req.type === 'bye') { reply({ type: 'bye' }); process.exit(0); }
    if (req.type !== 'new' && req.type !== 'call') { reply({ type: 'errored', message: `unknown request type ${JSON.stringify(req.type)}` }); continue; }
    if (loadError) { reply({ type: 'errored', message: `the solution did not load: ${loadError.message}` }); continue; }

    const foresee = Array.isArray(req.foresee) && req.foresee.length > 0 ? req.foresee : null;
    current = { seq, seqText: JSON.stringify(seq) ?? 'null', n: 0, foresee, line: got.line, exact: undefined };
    let msg;
    try {
      if (req.type === 'new') {
        instance = null; // a failed `new` must not leave the previous instance answering calls
        const made = makeInstance(req, solution, name);
        instance = made.instance ?? null;
        msg = made.skipped ? { type: 'skipped', reason: made.skipped } : { type: 'return', value: null };
      } else {
        if (!instance) throw new ShimError('no instance: send a successful `new` first');
        const value = callMethod(instance, req.method, Array.isArray(req.args) ? req.args : []);
        // JSON has no undefined, and the contracts tell it from null: it is said in a key of its own.
        msg = value === undefined ? { type: 'return', undefined: true } : { type: 'return', value };
      }
    } catch (e) {
      if (e instanceof ShimError) {
        msg = { type: 'errored', message: e.message };
      } else {
        const kind = errorKind(e);
        const cls = e instanceof Error ? e.constructor?.name || e.name : typeof e;
        msg = { type: 'raised', error: { kind, class: cls, message: e instanceof Error ? String(e.message) : String(e) } };
        if (kind === 'error') { // an unexpected error: where in their code it came from helps the student
          const frames = traceback(e);
          if (frames.length > 0) msg.traceback = frames;
        }
      }
    } finally {
      current = null;
    }
    // One turn of the event loop, so that what the call left to promises and timers runs now
    // and its errors are told with this call.
    await turn();
    msg = asyncErrorReply() ?? msg;
    flushOutput(seq);
    let line;
    try {
      line = JSON.stringify({ seq, ...msg });
    } catch (e) {
      line = JSON.stringify({ seq, type: 'errored', message: `${req.method}() returned a value that is not JSON-serializable: ${e.message}` });
    }
    writeLine(line);
  }
}

const file = process.argv[2];
if (!file) {
  shimSays('usage: node dlqspec-shim.mjs path/to/solution.{mjs,js,ts}\n');
  process.exit(2);
}
const abs = path.resolve(file);
solutionDir = path.dirname(abs);
let solution = null;
let loadError = null;
// The solution loads after the first message, a hello that describes the contracts whose given
// parts and errors it may import.
const first = readMessage();
if (first === null) process.exit(0);
if (first.msg.type === 'hello') learnContracts(first.msg.exercises);
try {
  solution = await loadSolution(abs);
} catch (e) {
  loadError = describeLoadError(e, abs);
}
await main(solution, loadError, abs, first);
