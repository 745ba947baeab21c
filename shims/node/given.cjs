// given.cjs: the module every `require` of `given` in a student solution resolves to: the given parts and errors of the contracts dlqspec's hello describes, put here by the shim before the solution loads.
'use strict';

// One object per process, however this file gets loaded. A student's CommonJS
// `require('./given')` and a TypeScript file run through tsx may each reach this file by a
// different loader; if each got its own copy, `e instanceof` a given error would fail between
// the student's code and the shim. A global registry makes every evaluation share one. Its
// names are added at run time, which Node's static detection of CommonJS exports cannot see:
// an ES module's `import` of `given` gets the shim's facade of this same object instead
// (dlqspec-shim.mjs, givenFacade), whose named exports are written out from hello.
module.exports = (globalThis[Symbol.for('dlqspec.given')] ??= {});
