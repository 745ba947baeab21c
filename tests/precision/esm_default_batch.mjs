// DLQConsumer only, ESM with `export default class DLQConsumer`: dedupe via has() called twice; clock read several times; replay picks ids from one entries() read, sends ALL of them in order, then removes them all; maxAttempts ?? 3.
import { PermanentError, Crash } from './given';

export default class DLQConsumer {
  constructor(queue, dlq, handler, clock, maxAttempts = 3) {
    Object.assign(this, { queue, dlq, handler, clock });
    this.maxAttempts = maxAttempts ?? 3;
  }

  processOne() {
    const t = this.clock.now();
    const m = this.queue.receive();
    if (m === null || m === undefined) return null;
    const known = this.dlq.has(m.id);
    if (known || this.dlq.has(m.id)) {
      this.queue.ack(m.id);
      return 'dead';
    }
    if (m.receiveCount > this.maxAttempts) {
      return this.deadLetter(m, 'poison', null, m.receiveCount - 1);
    }
    let failed = false;
    let failure;
    try {
      this.handler(m.body);
    } catch (e) {
      if (e instanceof Crash) throw e;
      failed = true;
      failure = e;
    } finally {
      void (this.clock.now() - t); // elapsed, unused
    }
    if (!failed) {
      this.queue.ack(m.id);
      return 'ok';
    }
    const error = `${failure.name}: ${failure.message}`;
    if (failure instanceof PermanentError) {
      return this.deadLetter(m, 'permanent', error, m.receiveCount);
    }
    if (m.receiveCount < this.maxAttempts) {
      this.queue.retry(m.id);
      return 'retry';
    }
    return this.deadLetter(m, 'exhausted', error, m.receiveCount);
  }

  deadLetter(m, reason, error, attempts) {
    const entry = {
      id: m.id,
      body: m.body,
      reason,
      error,
      attempts,
      firstAttemptAt: m.firstReceivedAt,
      failedAt: this.clock.now(),
    };
    this.dlq.put(entry);
    this.queue.ack(m.id);
    return 'dead';
  }

  replay(ids) {
    const entries = this.dlq.entries();
    const pick = [];
    const source = ids == null ? entries.map((e) => e.id) : Array.from(ids);
    for (const id of source) {
      if (pick.some((p) => p.id === id)) continue;
      const entry = entries.find((e) => e.id === id);
      if (entry) pick.push(entry);
    }
    for (const entry of pick) this.queue.send(entry.id, entry.body);
    for (const entry of pick) this.dlq.remove(entry.id);
    return pick.map((e) => e.id);
  }
}
