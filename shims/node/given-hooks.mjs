// given-hooks.mjs: ESM hooks (loaded by module.register) that point every import of `given` at the shim's facade of given.cjs, and run TypeScript through the shim's transform when it is the one in use.
import { createRequire } from 'node:module';

// `given`, `./given`, `./given.js`, `./given.mjs`, `./given.ts`, ... : the
// student may keep a local given.* for their own tests; inside dlqspec the
// shim's copy must win so errors and proxies are the ones the shim knows.
export const GIVEN_SPECIFIER = /^(?:given|\.\/given(?:\.(?:[cm]?js|[cm]?ts))?)$/;

// The facade's URL (a data: URL whose module re-exports given.cjs's object by name: the shim
// writes it from hello before it registers these hooks, so it reaches this thread as data).
let givenUrl;
// typescript.cjs, on this thread of its own, when the shim transforms TypeScript (a Node
// before 22.7 without tsx: dlqspec-shim.mjs, registerTypeScript).
let typescript = null;

export function initialize(data) {
  givenUrl = data.givenUrl;
  if (data.typescript) typescript = createRequire(import.meta.url)('./typescript.cjs');
}

// Whether an import of `specifier` from the module at `parentURL` gets the shim's given:
// packages in node_modules keep their own meaning of "./given". Shared with the shim, which
// answers the same question in its own thread when it can (dlqspec-shim.mjs, installGivenRedirect).
export function redirectsToGiven(specifier, parentURL) {
  return GIVEN_SPECIFIER.test(specifier) && !parentURL?.includes('/node_modules/');
}

export function resolve(specifier, context, nextResolve) {
  if (redirectsToGiven(specifier, context.parentURL)) {
    return { url: givenUrl, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export function load(url, context, nextLoad) {
  if (typescript !== null && url.startsWith('file:') && typescript.isTypeScript(url)) return typescript.load(url);
  return nextLoad(url, context);
}
