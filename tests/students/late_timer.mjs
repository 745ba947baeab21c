// A student's DLQConsumer whose processOne leaves a 0 ms timer behind that throws, and receives nothing.
function complainLater() {
  throw new Error('late');
}

export class DLQConsumer {
  constructor(queue) {
    this.queue = queue;
  }

  processOne() {
    setTimeout(complainLater, 0);
    return null;
  }

  replay() {
    return [];
  }
}
