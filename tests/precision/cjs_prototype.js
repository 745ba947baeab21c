// Both contracts, CommonJS with pre-class function constructors and prototype methods: dedupe via entries().some(); poison/permanent/exhausted share one table-driven dead-letter path; replay reads entries() once up front, send-then-remove per id, duplicates skipped via a seen object; RetryQueue keeps ready as a linked list (head/tail), state() via JSON round-trip, outcome via switch.
'use strict';
var given = require('./given');

function DLQConsumer(queue, dlq, handler, clock, maxAttempts) {
  if (!(this instanceof DLQConsumer)) return new DLQConsumer(queue, dlq, handler, clock, maxAttempts);
  this.queue = queue;
  this.dlq = dlq;
  this.handler = handler;
  this.clock = clock;
  this.maxAttempts = typeof maxAttempts === 'number' ? maxAttempts : 3;
}

DLQConsumer.prototype.processOne = function () {
  var msg = this.queue.receive();
  if (!msg) return null;
  var id = msg.id;
  var dlqHasIt = this.dlq.entries().some(function (e) { return e.id === id; });
  if (dlqHasIt) {
    this.queue.ack(id);
    return 'dead';
  }
  if (msg.receiveCount > this.maxAttempts) {
    return this.deadLetter(msg, 'poison', null);
  }
  try {
    this.handler(msg.body);
  } catch (err) {
    if (err instanceof given.Crash) throw err;
    if (err instanceof given.PermanentError) return this.deadLetter(msg, 'permanent', err);
    if (msg.receiveCount < this.maxAttempts) {
      this.queue.retry(id);
      return 'retry';
    }
    return this.deadLetter(msg, 'exhausted', err);
  }
  this.queue.ack(id);
  return 'ok';
};

DLQConsumer.prototype.deadLetter = function (msg, reason, err) {
  var poison = reason === 'poison';
  this.dlq.put({
    id: msg.id,
    body: msg.body,
    reason: reason,
    error: poison ? null : err.name + ': ' + err.message,
    attempts: poison ? msg.receiveCount - 1 : msg.receiveCount,
    firstAttemptAt: msg.firstReceivedAt,
    failedAt: this.clock.now(),
  });
  this.queue.ack(msg.id);
  return 'dead';
};

DLQConsumer.prototype.replay = function (ids) {
  var entries = this.dlq.entries();
  var list = ids;
  if (list === undefined || list === null) {
    list = entries.map(function (e) { return e.id; });
  }
  var seen = Object.create(null);
  var replayed = [];
  for (var i = 0; i < list.length; i++) {
    var id = list[i];
    if (seen[id]) continue;
    var entry = null;
    for (var j = 0; j < entries.length; j++) {
      if (entries[j].id === id) { entry = entries[j]; break; }
    }
    if (entry === null) continue;
    seen[id] = true;
    this.queue.send(id, entry.body);
    this.dlq.remove(id);
    replayed.push(id);
  }
  return replayed;
};

function RetryQueue(maxAttempts) {
  if (!(this instanceof RetryQueue)) return new RetryQueue(maxAttempts);
  if (typeof maxAttempts !== 'number' || !Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError('maxAttempts must be an integer >= 1');
  }
  this.maxAttempts = maxAttempts;
  this.head = null;
  this.tail = null;
  this.done = [];
  this.quarantine = [];
}

RetryQueue.prototype.pushReady = function (job) {
  var node = { job: job, next: null };
  if (this.tail) this.tail.next = node; else this.head = node;
  this.tail = node;
};

RetryQueue.prototype.popReady = function () {
  var node = this.head;
  if (!node) return null;
  this.head = node.next;
  if (!this.head) this.tail = null;
  return node.job;
};

RetryQueue.prototype.submit = function (jobId, payload) {
  this.pushReady({ id: jobId, payload: payload, attempts: 0 });
};

RetryQueue.prototype.process = function (outcome) {
  switch (outcome) {
    case 'success': case 'transient': case 'permanent': break;
    default: throw new RangeError('outcome must be success, transient or permanent');
  }
  var job = this.popReady();
  if (job === null) return null;
  job.attempts += 1;
  switch (outcome) {
    case 'success':
      this.done.push(job.id);
      return 'done';
    case 'permanent':
      this.quarantine.push({ id: job.id, payload: job.payload, attempts: job.attempts, reason: 'permanent' });
      return 'dead';
    case 'transient':
      if (job.attempts < this.maxAttempts) {
        this.pushReady(job);
        return 'retry';
      }
      this.quarantine.push({ id: job.id, payload: job.payload, attempts: job.attempts, reason: 'exhausted' });
      return 'dead';
  }
};

RetryQueue.prototype.replay = function (jobId) {
  var idx = -1;
  this.quarantine.forEach(function (q, i) { if (idx === -1 && q.id === jobId) idx = i; });
  if (idx === -1) return false;
  var q = this.quarantine.splice(idx, 1)[0];
  this.pushReady({ id: q.id, payload: q.payload, attempts: 0 });
  return true;
};

RetryQueue.prototype.state = function () {
  var ready = [];
  for (var n = this.head; n; n = n.next) ready.push(n.job);
  return JSON.parse(JSON.stringify({ ready: ready, done: this.done, quarantine: this.quarantine }));
};

module.exports = { DLQConsumer: DLQConsumer, RetryQueue: RetryQueue };
