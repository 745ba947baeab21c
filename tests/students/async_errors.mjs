// A student's DLQConsumer that leaves a rejected promise and a throwing timer behind each call, and receives nothing.
function later() {
  return Promise.reject(new Error('lost in a promise'));
}

export class DLQConsumer {
  constructor(queue) {
    this.queue = queue;
  }

  processOne() {
    later();
    setImmediate(() => { throw new TypeError('thrown by a callback'); });
    return null;
  }

  replay() {
    return [];
  }
}
