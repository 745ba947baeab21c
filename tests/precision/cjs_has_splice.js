// Both contracts, CommonJS: dedupe via dlq.has(id); replay with has() per id plus one entries() read per replayed id, duplicates via a seen Set; RetryQueue as three arrays, ready head taken with splice(0, 1), state() built by hand, outcome checked with Array.prototype.includes.
'use strict';
const { PermanentError, Crash } = require('./given');

class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts = 3) {
    this.queue = queue;
    this.dlq = dlq;
    this.handler = handler;
    this.clock = clock;
    this.maxAttempts = maxAttempts;
  }

  processOne() {
    const msg = this.queue.receive();
    if (msg === null || msg === undefined) return null;
    if (this.dlq.has(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    const count = msg.receiveCount;
    if (count > this.maxAttempts) return this._deadLetter(msg, 'poison', null, count - 1);
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof Crash) throw e;
      const error = `${e.name}: ${e.message}`;
      if (e instanceof PermanentError) return this._deadLetter(msg, 'permanent', error, count);
      if (count < this.maxAttempts) {
        this.queue.retry(msg.id);
        return 'retry';
      }
      return this._deadLetter(msg, 'exhausted', error, count);
    }
    this.queue.ack(msg.id);
    return 'ok';
  }

  _deadLetter(msg, reason, error, attempts) {
    const entry = {
      id: msg.id,
      body: msg.body,
      reason: reason,
      error: error,
      attempts: attempts,
      firstAttemptAt: msg.firstReceivedAt,
      failedAt: this.clock.now(),
    };
    this.dlq.put(entry);
    this.queue.ack(msg.id);
    return 'dead';
  }

  replay(ids) {
    const targets = ids == null ? this.dlq.entries().map((e) => e.id) : ids;
    const seen = new Set();
    const out = [];
    for (let k = 0; k < targets.length; k++) {
      const id = targets[k];
      if (seen.has(id) || !this.dlq.has(id)) continue;
      seen.add(id);
      const entry = this.dlq.entries().filter((e) => e.id === id)[0];
      this.queue.send(id, entry.body);
      this.dlq.remove(id);
      out.push(id);
    }
    return out;
  }
}

const VALID = ['success', 'transient', 'permanent'];

class RetryQueue {
  constructor(maxAttempts) {
    if (typeof maxAttempts !== 'number' || maxAttempts % 1 !== 0 || maxAttempts < 1 || !isFinite(maxAttempts)) {
      throw new RangeError('maxAttempts must be an integer >= 1');
    }
    this.maxAttempts = maxAttempts;
    this.readyJobs = [];
    this.doneIds = [];
    this.deadJobs = [];
  }

  submit(jobId, payload) {
    this.readyJobs.push({ id: jobId, payload: payload, attempts: 0 });
  }

  process(outcome) {
    if (!VALID.includes(outcome)) throw new RangeError('invalid outcome');
    if (this.readyJobs.length === 0) return null;
    const job = this.readyJobs.splice(0, 1)[0];
    job.attempts = job.attempts + 1;
    if (outcome === 'success') {
      this.doneIds.push(job.id);
      return 'done';
    }
    if (outcome === 'permanent') {
      job.reason = 'permanent';
      this.deadJobs.push(job);
      return 'dead';
    }
    if (job.attempts < this.maxAttempts) {
      this.readyJobs.push(job);
      return 'retry';
    }
    job.reason = 'exhausted';
    this.deadJobs.push(job);
    return 'dead';
  }

  replay(jobId) {
    for (let i = 0; i < this.deadJobs.length; i++) {
      if (this.deadJobs[i].id === jobId) {
        const job = this.deadJobs.splice(i, 1)[0];
        this.readyJobs.push({ id: job.id, payload: job.payload, attempts: 0 });
        return true;
      }
    }
    return false;
  }

  state() {
    return {
      ready: this.readyJobs.map((j) => ({ id: j.id, payload: j.payload, attempts: j.attempts })),
      done: this.doneIds.slice(),
      quarantine: this.deadJobs.map((j) => ({ id: j.id, payload: j.payload, attempts: j.attempts, reason: j.reason })),
    };
  }
}

module.exports = { DLQConsumer, RetryQueue };
