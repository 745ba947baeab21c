// A student's DLQConsumer with a syntax error on line 5 (a missing closing parenthesis).
import { PermanentError } from './given';

export class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts = 3 {
    this.queue = queue;
  }
}
