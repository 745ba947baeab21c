// given.cjs: the lesson's "given" module (errors, clock, queue, DLQ) that every import of `given` in a student solution resolves to.
'use strict';

// One set of classes per process, however this file gets loaded. A student's
// ESM `import 'given'`, a CommonJS `require('./given')` and a TypeScript file
// run through tsx may each reach this file by a different loader; if each got
// its own copy, `e instanceof PermanentError` would fail between the student's
// code and the shim. A global registry makes every evaluation share one copy.
const KEY = Symbol.for('dlqspec.given');
const g = (globalThis[KEY] ??= build());

function build() {
  // An Error subclass whose `name` is the class name, so `${e.name}: ${e.message}`
  // gives "PermanentError: boom" as the lesson's entry format expects.
  function errorClass(name, Base = Error) {
    const C = { [name]: class extends Base {} }[name];
    Object.defineProperty(C.prototype, 'name', { value: name, writable: true, configurable: true });
    return C;
  }
  const PermanentError = errorClass('PermanentError');
  const TransientError = errorClass('TransientError');
  // JavaScript has no BaseException: Crash is an ordinary Error the consumer must rethrow.
  const Crash = errorClass('Crash');
  // Raised by the world when the consumer misuses it (e.g. acks an id that is not in flight).
  const MisuseError = errorClass('MisuseError');

  // The shim installs the function that sends a world call to dlqspec and waits for its answer.
  let world = null;
  const call = (name, ...args) => {
    if (!world) throw new MisuseError(`${name}() called outside a dlqspec request (e.g. at import time)`);
    return world(name, args);
  };

  // Proxies: each method is answered by dlqspec's world, which keeps the real state. Nothing is
  // translated: the world hands out messages with the lesson's camelCase keys (receiveCount,
  // firstReceivedAt) and keeps entries exactly as the solution put them, so an entry written
  // with snake_case keys is a difference the checker shows, as the lesson's own tests would.
  class FakeClock {
    now() { return call('clock.now'); }
    advance(n) { return call('clock.advance', n); }
  }
  class FakeQueue {
    constructor(clock) { void clock; } // the world owns the clock; kept for the lesson's signature
    send(id, body) { return call('queue.send', id, body); }
    receive() { return call('queue.receive'); }
    ack(id) { return call('queue.ack', id); }
    retry(id) { return call('queue.retry', id); }
    recover() { return call('queue.recover'); }
    pending() { return call('queue.pending'); }
  }
  class FakeDLQ {
    put(entry) { return call('dlq.put', entry); }
    has(id) { return call('dlq.has', id); }
    remove(id) { return call('dlq.remove', id); }
    entries() { return call('dlq.entries') ?? []; }
  }

  const setWorld = (fn) => { world = fn; };
  return { PermanentError, TransientError, Crash, MisuseError, FakeClock, FakeQueue, FakeDLQ, errorClass, setWorld };
}

// Spelled out one by one so Node's CommonJS export detection offers them as named ESM imports.
exports.PermanentError = g.PermanentError;
exports.TransientError = g.TransientError;
exports.Crash = g.Crash;
exports.MisuseError = g.MisuseError;
exports.FakeClock = g.FakeClock;
exports.FakeQueue = g.FakeQueue;
exports.FakeDLQ = g.FakeDLQ;
// given.d.ts's two types, as names with no value: Node's own TypeScript transform (and the
// shim's, the same) keeps `import { Message, Entry } from './given'` as written, as tsc's
// verbatimModuleSyntax does, so the import must find the names for the solution to load.
exports.Message = undefined;
exports.Entry = undefined;
// For the shim only (not part of the lesson's given API).
exports._errorClass = g.errorClass;
exports._setWorld = g.setWorld;
