// Both contracts, ESM: dedupe via dlq.has(id); replay reads entries() once up front, send-then-remove per id with a seen Set; RetryQueue keeps jobs in a Map plus an order array, state() via structuredClone, outcomes checked with a Set.
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
    if (msg == null) return null;
    if (this.dlq.has(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    if (msg.receiveCount > this.maxAttempts) {
      return this.#deadLetter(msg, 'poison', null, msg.receiveCount - 1);
    }
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof Crash) throw e;
      const error = `${e.name}: ${e.message}`;
      if (e instanceof PermanentError) {
        return this.#deadLetter(msg, 'permanent', error, msg.receiveCount);
      }
      // TransientError or anything unexpected: treated as transient
      if (msg.receiveCount < this.maxAttempts) {
        this.queue.retry(msg.id);
        return 'retry';
      }
      return this.#deadLetter(msg, 'exhausted', error, msg.receiveCount);
    }
    this.queue.ack(msg.id);
    return 'ok';
  }

  #deadLetter(msg, reason, error, attempts) {
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
    for (const entry of this.dlq.entries()) {
      if (!bodies.has(entry.id)) bodies.set(entry.id, entry.body);
    }
    const wanted = ids == null ? [...bodies.keys()] : ids;
    const seen = new Set();
    const replayed = [];
    for (const id of wanted) {
      if (seen.has(id) || !bodies.has(id)) continue;
      seen.add(id);
      this.queue.send(id, bodies.get(id));
      this.dlq.remove(id);
      replayed.push(id);
    }
    return replayed;
  }
}

const OUTCOMES = new Set(['success', 'transient', 'permanent']);

export class RetryQueue {
  constructor(maxAttempts) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer >= 1, got ${String(maxAttempts)}`);
    }
    this.maxAttempts = maxAttempts;
    this.jobs = new Map();
    this.ready = [];
    this.done = [];
    this.quarantine = [];
  }

  submit(jobId, payload) {
    this.jobs.set(jobId, { id: jobId, payload, attempts: 0 });
    this.ready.push(jobId);
  }

  process(outcome) {
    if (!OUTCOMES.has(outcome)) throw new RangeError(`invalid outcome: ${String(outcome)}`);
    if (this.ready.length === 0) return null;
    const id = this.ready.shift();
    const job = this.jobs.get(id);
    job.attempts += 1;
    if (outcome === 'success') {
      this.done.push(id);
      return 'done';
    }
    if (outcome === 'transient' && job.attempts < this.maxAttempts) {
      this.ready.push(id);
      return 'retry';
    }
    job.reason = outcome === 'permanent' ? 'permanent' : 'exhausted';
    this.quarantine.push(id);
    return 'dead';
  }

  replay(jobId) {
    const at = this.quarantine.indexOf(jobId);
    if (at === -1) return false;
    this.quarantine.splice(at, 1);
    const job = this.jobs.get(jobId);
    delete job.reason;
    job.attempts = 0;
    this.ready.push(jobId);
    return true;
  }

  state() {
    return structuredClone({
      ready: this.ready.map((id) => this.jobs.get(id)),
      done: this.done,
      quarantine: this.quarantine.map((id) => this.jobs.get(id)),
    });
  }
}
