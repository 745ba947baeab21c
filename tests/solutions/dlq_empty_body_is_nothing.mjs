// breaks: dlq-consumer/empty-queue; mistake: tests `!msg?.body` for nothing ready, so a message whose body is the empty string is left in flight and null returned
import { PermanentError, Crash } from 'given';

export class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts = 3) {
    Object.assign(this, { queue, dlq, handler, clock, maxAttempts });
  }

  processOne() {
    const msg = this.queue.receive();
    // The mistake: a truthiness test, which an empty body fails too.
    if (!msg?.body) return null;
    // An earlier delivery died between dlq.put and the ack: finish that ack, never put twice.
    if (this.dlq.has(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    // Every earlier delivery died mid-handler (a Crash): don't give it another go.
    if (msg.receiveCount > this.maxAttempts) return this.#deadLetter(msg, 'poison', null, msg.receiveCount - 1);
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof Crash) throw e; // the process dying: JavaScript has no BaseException to do this for us
      if (e instanceof PermanentError) return this.#deadLetter(msg, 'permanent', e, msg.receiveCount);
      // The queue's receiveCount survives restarts; a counter of our own would not.
      if (msg.receiveCount < this.maxAttempts) {
        this.queue.retry(msg.id);
        return 'retry';
      }
      return this.#deadLetter(msg, 'exhausted', e, msg.receiveCount);
    }
    this.queue.ack(msg.id);
    return 'ok';
  }

  #deadLetter(msg, reason, error, attempts) {
    this.dlq.put({
      id: msg.id,
      body: msg.body,
      reason,
      error: error === null ? null : `${error.name}: ${error.message}`,
      attempts,
      firstAttemptAt: msg.firstReceivedAt,
      failedAt: this.clock.now(),
    });
    // put before ack: dying in between redelivers it, and the dedupe check above finishes the job.
    this.queue.ack(msg.id);
    return 'dead';
  }

  replay(ids) {
    const bodies = new Map();
    for (const e of this.dlq.entries()) if (!bodies.has(e.id)) bodies.set(e.id, e.body);
    const replayed = [];
    for (const id of ids ?? [...bodies.keys()]) {
      if (!bodies.has(id)) continue;
      // send first: a crash between the two leaves a duplicate, never a lost message.
      this.queue.send(id, bodies.get(id));
      bodies.delete(id);
      this.dlq.remove(id);
      replayed.push(id);
    }
    return replayed;
  }
}
