// Both contracts, CommonJS: dedupe by scanning dlq.entries() twice (find, then confirm); clock.now() and queue.pending() read for a log record every call; replay: one entries() read, then send ALL selected ids in order, then remove them all; RetryQueue with Map-free objects keyed by id + order arrays, state() via structuredClone, outcome via a Set after typeof, Number.isInteger with `<= 0`.
'use strict';
const given = require('./given');

function describe(err) {
  return `${err.name}: ${err.message}`;
}

class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts) {
    this.queue = queue;
    this.dlq = dlq;
    this.handler = handler;
    this.clock = clock;
    this.maxAttempts = maxAttempts === undefined ? 3 : maxAttempts;
    this.log = [];
  }

  note(text) {
    this.log.push({ at: this.clock.now(), text, pending: this.queue.pending().length });
    if (this.log.length > 100) this.log.shift();
  }

  isDeadLettered(id) {
    const hit = this.dlq.entries().find((e) => e.id === id);
    return hit !== undefined && this.dlq.entries().some((e) => e.id === id);
  }

  processOne() {
    this.note('poll');
    const msg = this.queue.receive();
    if (msg == null) return null;
    this.note(`got ${msg.id}`);
    if (this.isDeadLettered(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    if (msg.receiveCount > this.maxAttempts) {
      return this.bury(msg, { reason: 'poison', error: null, attempts: msg.receiveCount - 1 });
    }
    let outcome = 'ok';
    let caught;
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof given.Crash) {
        this.note(`crash on ${msg.id}`);
        throw e;
      }
      caught = e;
      outcome = e instanceof given.PermanentError ? 'permanent' : 'transient';
    }
    switch (outcome) {
      case 'ok':
        this.queue.ack(msg.id);
        return 'ok';
      case 'permanent':
        return this.bury(msg, { reason: 'permanent', error: describe(caught), attempts: msg.receiveCount });
      default:
        if (msg.receiveCount < this.maxAttempts) {
          this.queue.retry(msg.id);
          this.note(`retry ${msg.id}`);
          return 'retry';
        }
        return this.bury(msg, { reason: 'exhausted', error: describe(caught), attempts: msg.receiveCount });
    }
  }

  bury(msg, { reason, error, attempts }) {
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
    this.note(`dead ${msg.id}`);
    return 'dead';
  }

  replay(ids) {
    const entries = this.dlq.entries();
    const byId = new Map();
    entries.forEach((e) => {
      if (!byId.has(e.id)) byId.set(e.id, e);
    });
    const chosen = [];
    for (const id of ids == null ? byId.keys() : ids) {
      if (byId.has(id) && !chosen.includes(id)) chosen.push(id);
    }
    chosen.forEach((id) => this.queue.send(id, byId.get(id).body));
    chosen.forEach((id) => this.dlq.remove(id));
    return chosen;
  }
}

const OUTCOMES = new Set(['success', 'transient', 'permanent']);

class RetryQueue {
  constructor(maxAttempts) {
    if (!Number.isInteger(maxAttempts) || maxAttempts <= 0) {
      throw new RangeError(`bad maxAttempts ${maxAttempts}`);
    }
    this.limit = maxAttempts;
    this.byId = Object.create(null);
    this.readyIds = [];
    this.doneIds = [];
    this.deadIds = [];
  }

  submit(jobId, payload) {
    this.byId[jobId] = { id: jobId, payload, attempts: 0, reason: undefined };
    this.readyIds.push(jobId);
  }

  process(outcome) {
    if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) {
      throw new RangeError(`bad outcome ${String(outcome)}`);
    }
    if (!this.readyIds.length) return null;
    const id = this.readyIds.shift();
    const job = this.byId[id];
    job.attempts += 1;
    if (outcome === 'success') {
      this.doneIds.push(id);
      return 'done';
    }
    if (outcome === 'transient' && job.attempts < this.limit) {
      this.readyIds.push(id);
      return 'retry';
    }
    job.reason = outcome === 'transient' ? 'exhausted' : 'permanent';
    this.deadIds.push(id);
    return 'dead';
  }

  replay(jobId) {
    const i = this.deadIds.indexOf(jobId);
    if (i < 0) return false;
    this.deadIds.splice(i, 1);
    const job = this.byId[jobId];
    job.reason = undefined;
    job.attempts = 0;
    this.readyIds.push(jobId);
    return true;
  }

  state() {
    const view = {
      ready: this.readyIds.map((id) => {
        const { reason, ...rest } = this.byId[id];
        return rest;
      }),
      done: this.doneIds,
      quarantine: this.deadIds.map((id) => this.byId[id]),
    };
    return structuredClone(view);
  }
}

module.exports = { DLQConsumer, RetryQueue };
