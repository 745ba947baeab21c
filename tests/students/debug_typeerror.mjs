// A student's DLQConsumer that logs while it works, and whose helper throws a TypeError when it dead-letters (it reads `msg.meta.firstReceivedAt`).
import { PermanentError, Crash } from './given';

function firstAttempt(msg) {
  return msg.meta.firstReceivedAt;
}

export class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts = 3) {
    Object.assign(this, { queue, dlq, handler, clock, maxAttempts });
  }

  processOne() {
    const msg = this.queue.receive();
    if (msg === null) return null;
    console.log('DEBUG got', msg.id);
    if (this.dlq.has(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    if (msg.receiveCount > this.maxAttempts) return this.deadLetter(msg, 'poison', null, msg.receiveCount - 1);
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof Crash) throw e;
      if (e instanceof PermanentError) return this.deadLetter(msg, 'permanent', e, msg.receiveCount);
      if (msg.receiveCount < this.maxAttempts) {
        this.queue.retry(msg.id);
        return 'retry';
      }
      return this.deadLetter(msg, 'exhausted', e, msg.receiveCount);
    }
    this.queue.ack(msg.id);
    return 'ok';
  }

  deadLetter(msg, reason, error, attempts) {
    console.error(`WARN dead-lettering ${msg.id}`);
    const entry = {
      id: msg.id, body: msg.body, reason,
      error: error === null ? null : `${error.name}: ${error.message}`,
      attempts, firstAttemptAt: firstAttempt(msg), failedAt: this.clock.now(),
    };
    this.dlq.put(entry);
    this.queue.ack(msg.id);
    return 'dead';
  }

  replay() {
    return [];
  }
}
