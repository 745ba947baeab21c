// syntax_error.ts: a TypeScript student solution that does not parse (line 6); the Node shim must answer hello with errored, file and line 6.
import { PermanentError } from './given';

export class DLQConsumer {
  processOne(): string | null {
    return = null;
  }
}
