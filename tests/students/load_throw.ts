// A student's TypeScript DLQConsumer whose module throws while it loads, from a helper called at top level.
interface Settings { maxAttempts: number }

function readSettings(): Settings {
  throw new Error('no settings file');
}

const settings: Settings = readSettings();

export class DLQConsumer {
  constructor(private queue: unknown) {
    void settings;
  }
}
