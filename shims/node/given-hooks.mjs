// given-hooks.mjs: ESM resolve hook (loaded by module.register) that points every import of `given` at the shim's given.cjs.

// `given`, `./given`, `./given.js`, `./given.mjs`, `./given.ts`, ... : the
// student may keep a local given.* for their own tests; inside dlqspec the
// shim's copy must win so errors and proxies are the ones the shim knows.
export const GIVEN_SPECIFIER = /^(?:given|\.\/given(?:\.(?:[cm]?js|[cm]?ts))?)$/;

let givenUrl;

export function initialize(data) {
  givenUrl = data.givenUrl;
}

// Whether an import of `specifier` from the module at `parentURL` gets the shim's given:
// packages in node_modules keep their own meaning of "./given". Shared with the shim, which
// answers the same question in its own thread when it can (dlqspec-shim.mjs, installGivenRedirect).
export function redirectsToGiven(specifier, parentURL) {
  return GIVEN_SPECIFIER.test(specifier) && !parentURL?.includes('/node_modules/');
}

export function resolve(specifier, context, nextResolve) {
  if (redirectsToGiven(specifier, context.parentURL)) {
    return { url: givenUrl, format: 'commonjs', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
