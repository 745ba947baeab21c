// Both contracts, ESM: dedupe by scanning dlq.entries() (and reading queue.pending() for a debug line); replay re-reads entries() once per id; RetryQueue with private fields (#ready, #done, #quarantine), state() via JSON.parse(JSON.stringify()), outcome validated with a switch.
import { PermanentError, Crash } from './given';

export class DLQConsumer {
  #queue;
  #dlq;
  #handler;
  #clock;
  #max;

  constructor(queue, dlq, handler, clock, maxAttempts = 3) {
    this.#queue = queue;
    this.#dlq = dlq;
    this.#handler = handler;
    this.#clock = clock;
    this.#max = maxAttempts;
  }

  processOne() {
    const message = this.#queue.receive();
    if (!message) return null;
    const { id, body, receiveCount } = message;
    console.debug(`received ${id} (#${receiveCount}), still ready: ${this.#queue.pending().join(',')}`);
    if (this.#dlq.entries().some((e) => e.id === id)) {
      this.#queue.ack(id);
      return 'dead';
    }
    if (receiveCount > this.#max) return this.#bury(message, 'poison', null, receiveCount - 1);
    let failed = false;
    let failure = null;
    try {
      this.#handler(body);
    } catch (err) {
      if (err instanceof Crash) throw err;
      failed = true;
      failure = err;
    }
    if (!failed) {
      this.#queue.ack(id);
      return 'ok';
    }
    const text = `${failure.name}: ${failure.message}`;
    if (failure instanceof PermanentError) return this.#bury(message, 'permanent', text, receiveCount);
    if (receiveCount >= this.#max) return this.#bury(message, 'exhausted', text, receiveCount);
    this.#queue.retry(id);
    return 'retry';
  }

  #bury(message, reason, error, attempts) {
    const failedAt = this.#clock.now();
    this.#dlq.put({
      id: message.id,
      body: message.body,
      reason,
      error,
      attempts,
      firstAttemptAt: message.firstReceivedAt,
      failedAt,
    });
    this.#queue.ack(message.id);
    return 'dead';
  }

  replay(ids) {
    const list = ids === undefined || ids === null ? this.#dlq.entries().map((e) => e.id) : ids;
    const replayed = [];
    for (const id of list) {
      const entry = this.#dlq.entries().find((e) => e.id === id);
      if (entry === undefined) continue; // unknown, or replayed a moment ago
      this.#queue.send(id, entry.body);
      this.#dlq.remove(id);
      replayed.push(id);
    }
    return replayed;
  }
}

export class RetryQueue {
  #max;
  #ready = [];
  #done = [];
  #quarantine = [];

  constructor(maxAttempts) {
    if (typeof maxAttempts !== 'number' || !Number.isInteger(maxAttempts)) {
      throw new RangeError('maxAttempts must be an integer');
    }
    if (maxAttempts < 1) throw new RangeError('maxAttempts must be at least 1');
    this.#max = maxAttempts;
  }

  submit(jobId, payload) {
    this.#ready.push({ id: jobId, payload, attempts: 0 });
  }

  process(outcome) {
    switch (outcome) {
      case 'success':
      case 'transient':
      case 'permanent':
        break;
      default:
        throw new RangeError(`unknown outcome ${JSON.stringify(outcome)}`);
    }
    const job = this.#ready.shift();
    if (job === undefined) return null;
    job.attempts++;
    switch (outcome) {
      case 'success':
        this.#done.push(job.id);
        return 'done';
      case 'permanent':
        this.#quarantine.push({ ...job, reason: 'permanent' });
        return 'dead';
      default:
        if (job.attempts < this.#max) {
          this.#ready.push(job);
          return 'retry';
        }
        this.#quarantine.push({ ...job, reason: 'exhausted' });
        return 'dead';
    }
  }

  replay(jobId) {
    const i = this.#quarantine.findIndex((j) => j.id === jobId);
    if (i < 0) return false;
    const [{ id, payload }] = this.#quarantine.splice(i, 1);
    this.#ready.push({ id, payload, attempts: 0 });
    return true;
  }

  state() {
    return JSON.parse(
      JSON.stringify({ ready: this.#ready, done: this.#done, quarantine: this.#quarantine }),
    );
  }
}
