// breaks: dlq-consumer/replay-selection; mistake: looks the ids to replay up in a plain object with `id in bodies`, so toString, constructor and every name an object has count as entries
import { PermanentError, Crash } from 'given';

export class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts = 3) {
    Object.assign(this, { queue, dlq, handler, clock, maxAttempts });
  }

  processOne() {
    const msg = this.queue.receive();
    if (msg === null) return null;
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
    // The mistake: a plain object looked up with `in`, which finds what every object has.
    const bodies = {};
    const order = [];
    for (const e of this.dlq.entries()) {
      if (!Object.hasOwn(bodies, e.id)) order.push(e.id);
      bodies[e.id] ??= e.body;
    }
    const replayed = [];
    for (const id of ids ?? order) {
      if (!(id in bodies) || replayed.includes(id)) continue;
      // send first: a crash between the two leaves a duplicate, never a lost message.
      this.queue.send(id, bodies[id]);
      this.dlq.remove(id);
      replayed.push(id);
    }
    return replayed;
  }
}
