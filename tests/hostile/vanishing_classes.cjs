// vanishing_classes.cjs (hostile): DLQConsumer and RetryQueue are getters that give the class
// to the shim's first lookup (the hello lists both contracts) and nothing after, so that a
// dlqspec trusting `skipped` would skip every spec and call that a pass.
class Nothing {}
const lookedUp = new Set();
for (const name of ['DLQConsumer', 'RetryQueue']) {
  Object.defineProperty(module.exports, name, {
    enumerable: true,
    get() {
      if (lookedUp.has(name)) return undefined;
      lookedUp.add(name);
      return Nothing;
    },
  });
}
