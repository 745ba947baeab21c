// typescript.cjs: the TypeScript transform the shim carries for a Node without its own (before 22.7) and no tsx: Node's own amaro (swc), its full transform, with source maps.
'use strict';

// Node 22.7 and later transform TypeScript themselves (--experimental-transform-types, which
// dlqspec gives them): with amaro, the swc build Node bundles. For an older Node (20, 21, 22.0
// to 22.6) with no tsx, the shim carries the same amaro (vendor/amaro.cjs.gz: its dist/internal.js
// as published on npm, gzipped) and applies it as Node would: the same transform (enums,
// namespaces, parameter properties), the same module formats, source maps so that stacks name
// the .ts lines. So a solution that runs on Node 24 runs the same way here.
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { fileURLToPath } = require('node:url');

const AMARO = path.join(__dirname, 'vendor', 'amaro.cjs.gz');
const TYPESCRIPT = /\.[cm]?ts$/;

// Whether a file name or file: URL is TypeScript (a declaration file never runs).
function isTypeScript(file) {
  return TYPESCRIPT.test(file) && !/\.d\.[cm]?ts$/.test(file);
}

let amaro = null;

// amaro, loaded on first use: gunzipped and compiled as the CommonJS module it is. Its
// WebAssembly runs in V8's baseline compiler only (--liftoff-only) while the solution loads:
// optimising swc's hot functions costs more than the few files it transforms (measured in
// docs/performance.md, "TypeScript without tsx"). `done()` gives V8 its tiers back.
function transformer() {
  if (amaro !== null) return amaro;
  require('node:v8').setFlagsFromString('--liftoff-only');
  const filename = path.join(__dirname, 'vendor', 'amaro.cjs');
  const code = require('node:zlib').gunzipSync(fs.readFileSync(AMARO)).toString('utf8');
  const m = new Module(filename, module);
  m.filename = filename;
  m.paths = [];
  m._compile(code, filename);
  amaro = m.exports;
  return amaro;
}

function done() {
  if (amaro !== null) require('node:v8').setFlagsFromString('--no-liftoff-only');
}

// An error swc gave, as Node gives it: a SyntaxError whose stack starts `FILE:LINE` and the
// line with a caret, so that the shim reads the .ts file and line from it as from any other.
function syntaxError(e, filename) {
  if (e === null || typeof e !== 'object' || typeof e.code !== 'string') return e;
  const unsupported = e.code === 'UnsupportedSyntax';
  const error = unsupported ? new Error(e.message) : new SyntaxError(String(e.message));
  if (unsupported) error.name = 'UnsupportedSyntaxError';
  error.stack = `${filename}:${e.startLine ?? 1}\n${e.snippet ?? ''}\n${error.name}: ${error.message}`;
  return error;
}

// JavaScript for a TypeScript file's text, with an inline source map pointing at it.
function transform(source, filename) {
  let out;
  try {
    out = transformer().transformSync(String(source), { mode: 'transform', sourceMap: true, filename });
  } catch (e) {
    throw syntaxError(e, filename);
  }
  const map = out.map ? `\n\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(out.map).toString('base64')}` : '';
  return `${out.code}${map}`;
}

// The "type" of the package.json that scopes `dir` (the first on the way up), or undefined.
function packageType(dir) {
  for (let at = dir; ; at = path.dirname(at)) {
    if (path.basename(at) === 'node_modules') return undefined;
    let text = null;
    try { text = fs.readFileSync(path.join(at, 'package.json'), 'utf8'); } catch { /* none here: go up */ }
    if (text !== null) {
      try { return JSON.parse(text).type; } catch { return undefined; }
    }
    if (path.dirname(at) === at) return undefined;
  }
}

// The syntax errors that say a file is an ES module, as Node's own detection reads them
// (containsModuleSyntax): module syntax, or top-level names CommonJS defines.
const MODULE_SYNTAX = [
  'Cannot use import statement outside a module',
  "Unexpected token 'export'",
  "Cannot use 'import.meta' outside a module",
  'await is only valid in async functions and the top level bodies of modules',
];
const CJS_NAMES = /^Identifier '(?:module|exports|require|__filename|__dirname)' has already been declared$/;

function containsModuleSyntax(code, filename) {
  try {
    require('node:vm').compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename });
    return false;
  } catch (e) {
    return e instanceof SyntaxError && (MODULE_SYNTAX.includes(e.message) || CJS_NAMES.test(e.message));
  }
}

// A TypeScript file's module format as Node 22.7 and later decide it: .mts is an ES module,
// .cts CommonJS, and .ts follows its package's "type", or with none the syntax it uses.
function formatOf(filename, code) {
  if (filename.endsWith('.mts')) return 'module';
  if (filename.endsWith('.cts')) return 'commonjs';
  const type = packageType(path.dirname(filename));
  if (type === 'module' || type === 'commonjs') return type;
  return containsModuleSyntax(code, filename) ? 'module' : 'commonjs';
}

// Each file's JavaScript, made once: the ES module loader and CommonJS may both ask for it.
const made = new Map();
function javascript(filename) {
  if (!made.has(filename)) made.set(filename, transform(fs.readFileSync(filename, 'utf8'), filename));
  return made.get(filename);
}

// What a load hook answers for a TypeScript file: an ES module's JavaScript, or for CommonJS no
// source, so that Node's CommonJS loader loads it through `require.extensions` (installed by
// installCommonJs in the main thread) and its `require` is the real one.
function load(url) {
  const filename = fileURLToPath(url);
  const code = javascript(filename);
  return formatOf(filename, code) === 'module'
    ? { format: 'module', source: code, shortCircuit: true }
    : { format: 'commonjs', source: null, shortCircuit: true };
}

// CommonJS `require` of a .ts or .cts file: its JavaScript compiled as Node compiles a file of
// its own (a .mts, an ES module, is for `import`); and stacks through the source maps.
function installCommonJs() {
  process.setSourceMapsEnabled(true);
  for (const ext of ['.ts', '.cts']) {
    Module._extensions[ext] = function compileTypeScript(m, filename) {
      m._compile(javascript(filename), filename);
    };
  }
}

module.exports = { isTypeScript, load, installCommonJs, done, formatOf };
