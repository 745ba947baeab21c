// breaks: outcome-queue/exhausted-quarantine; mistake: the quarantine is a plain object keyed by id, so ids like "10" and "2" are listed in numeric order, not in quarantine order
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

const OUTCOMES = ['success', 'transient', 'permanent'];

export class RetryQueue {
  // The mistake: the quarantine is a plain object keyed by id, whose key order puts
  // integer-like ids ("2", "10") first, in numeric order, not in quarantine order.
  #max; #ready = []; #done = []; #quarantine = {};

  constructor(maxAttempts) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer >= 1, got ${JSON.stringify(maxAttempts)}`);
    }
    this.#max = maxAttempts;
  }

  submit(jobId, payload) {
    this.#ready.push({ id: jobId, payload, attempts: 0 });
  }

  process(outcome) {
    // Validate before touching anything: a bad outcome must not cost a job its place.
    if (!OUTCOMES.includes(outcome)) throw new RangeError(`outcome must be one of ${OUTCOMES.join(', ')}, got ${JSON.stringify(outcome)}`);
    const job = this.#ready.shift();
    if (job === undefined) return null;
    job.attempts += 1; // count the attempt before deciding what budget is left
    if (outcome === 'success') {
      this.#done.push(job.id);
      return 'done';
    }
    if (outcome === 'transient' && job.attempts < this.#max) {
      this.#ready.push(job);
      return 'retry';
    }
    this.#quarantine[job.id] = { ...job, reason: outcome === 'permanent' ? 'permanent' : 'exhausted' };
    return 'dead';
  }

  replay(jobId) {
    if (!Object.hasOwn(this.#quarantine, jobId)) return false;
    const job = this.#quarantine[jobId];
    delete this.#quarantine[jobId];
    this.#ready.push({ id: job.id, payload: job.payload, attempts: 0 });
    return true;
  }

  state() {
    // A deep copy: callers inspecting diagnostics must not rewrite the queue.
    return structuredClone({ ready: this.#ready, done: this.#done, quarantine: Object.values(this.#quarantine) });
  }
}
