// A student's TypeScript DLQConsumer with a syntax error on line 6 (a missing closing parenthesis).
import { PermanentError } from './given';

export class DLQConsumer {
  private queue: unknown;
  constructor(queue: unknown, dlq: unknown, handler: unknown, clock: unknown, maxAttempts = 3 {
    this.queue = queue;
  }
}
