// A student's DLQConsumer whose module throws while it loads, from a helper called at top level.
function readSettings() {
  throw new Error('no settings file');
}

const settings = readSettings();

export class DLQConsumer {
  constructor(queue) {
    this.queue = queue;
    this.settings = settings;
  }
}
