// breaks: dlq-consumer/empty-queue; mistake: processOne ends with a bare `return;` when nothing is ready, which is JavaScript's undefined, not the null the contract pins
import { PermanentError, TransientError, Crash } from './given';

export class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts = 3) {
    this.queue = queue;
    this.dlq = dlq;
    this.handler = handler;
    this.clock = clock;
    this.maxAttempts = maxAttempts;
  }

  processOne() {
    const msg = this.queue.receive();
    if (msg === null || msg === undefined) return;
    const id = msg.id;
    if (this.dlq.has(id)) {
      this.queue.ack(id);
      return 'dead';
    }
    const rc = msg.receiveCount;
    if (rc > this.maxAttempts) {
      return this.deadLetter(msg, 'poison', null, rc - 1);
    }
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof Crash) throw e;
      if (e instanceof PermanentError) {
        return this.deadLetter(msg, 'permanent', this.describe(e), rc);
      }
      if (rc < this.maxAttempts) {
        this.queue.retry(id);
        return 'retry';
      }
      return this.deadLetter(msg, 'exhausted', this.describe(e), rc);
    }
    this.queue.ack(id);
    return 'ok';
  }

  describe(e) {
    return `${e.name}: ${e.message}`;
  }

  deadLetter(msg, reason, error, attempts) {
    this.dlq.put({
      id: msg.id,
      body: msg.body,
      reason,
      error,
      attempts,
      firstAttemptAt: msg.firstReceivedAt,
      failedAt: this.clock.now(),
    });
    this.queue.ack(msg.id);
    return 'dead';
  }

  replay(ids) {
    const bodies = new Map();
    for (const e of this.dlq.entries()) {
      if (!bodies.has(e.id)) bodies.set(e.id, e.body);
    }
    const selection = ids === undefined || ids === null ? [...bodies.keys()] : ids;
    const replayed = [];
    for (const id of selection) {
      if (bodies.has(id) && !replayed.includes(id)) {
        this.queue.send(id, bodies.get(id));
        this.dlq.remove(id);
        replayed.push(id);
      }
    }
    return replayed;
  }
}
