// Both contracts, TypeScript: `export default class RetryQueue` plus a named DLQConsumer; DLQConsumer dedupes with has() called twice, replay loops send-then-remove per id re-reading entries() per id (duplicates drop out by re-check); RetryQueue stores Job class instances (attempts counted by a method), state() via JSON round-trip of toJSON views, outcome checked with a Set after typeof.
import { PermanentError, Crash } from './given';
import type { FakeQueue, FakeDLQ, FakeClock, Message } from './given';

export class DLQConsumer {
  private queue: FakeQueue;
  private dlq: FakeDLQ;
  private handler: (body: unknown) => void;
  private clock: FakeClock;
  private maxAttempts: number;

  constructor(queue: FakeQueue, dlq: FakeDLQ, handler: (body: unknown) => void, clock: FakeClock, maxAttempts?: number) {
    this.queue = queue;
    this.dlq = dlq;
    this.handler = handler;
    this.clock = clock;
    this.maxAttempts = maxAttempts === undefined ? 3 : maxAttempts;
  }

  processOne(): 'ok' | 'retry' | 'dead' | null {
    const msg = this.queue.receive();
    if (msg == null) return null;
    const { id } = msg;
    if (this.dlq.has(id) && this.dlq.has(id)) {
      this.queue.ack(id);
      return 'dead';
    }
    const poison = msg.receiveCount > this.maxAttempts;
    if (poison) return this.toDlq(msg, 'poison', null, msg.receiveCount - 1);
    try {
      this.handler(msg.body);
    } catch (thrown) {
      if (thrown instanceof Crash) throw thrown;
      const e = thrown as Error;
      const permanent = thrown instanceof PermanentError;
      const exhausted = !permanent && msg.receiveCount >= this.maxAttempts;
      if (permanent || exhausted) {
        return this.toDlq(msg, permanent ? 'permanent' : 'exhausted', `${e.name}: ${e.message}`, msg.receiveCount);
      }
      this.queue.retry(id);
      return 'retry';
    }
    this.queue.ack(id);
    return 'ok';
  }

  private toDlq(msg: Message, reason: 'poison' | 'permanent' | 'exhausted', error: string | null, attempts: number): 'dead' {
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

  replay(ids?: string[]): string[] {
    const order = ids ?? this.dlq.entries().map((e) => e.id);
    const replayed: string[] = [];
    for (const id of order) {
      const entry = this.dlq.entries().find((e) => e.id === id);
      if (!entry) continue;
      this.queue.send(id, entry.body);
      this.dlq.remove(id);
      replayed.push(id);
    }
    return replayed;
  }
}

class Job {
  attempts = 0;
  reason: 'permanent' | 'exhausted' | null = null;
  constructor(readonly id: string, readonly payload: string) {}
  attempt(): number {
    return ++this.attempts;
  }
  reset(): void {
    this.attempts = 0;
    this.reason = null;
  }
  toJSON() {
    const base = { id: this.id, payload: this.payload, attempts: this.attempts };
    return this.reason === null ? base : { ...base, reason: this.reason };
  }
}

const OUTCOMES: ReadonlySet<string> = new Set(['success', 'transient', 'permanent']);

export default class RetryQueue {
  private readonly max: number;
  private readonly ready: Job[] = [];
  private readonly done: Job[] = [];
  private readonly dead: Job[] = [];

  constructor(maxAttempts: number) {
    if (!(typeof maxAttempts === 'number' && Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
      throw new RangeError('maxAttempts must be an integer >= 1');
    }
    this.max = maxAttempts;
  }

  submit(jobId: string, payload: string): void {
    this.ready.push(new Job(jobId, payload));
  }

  process(outcome: string): 'done' | 'retry' | 'dead' | null {
    if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) throw new RangeError('invalid outcome');
    const job = this.ready.shift();
    if (!job) return null;
    const n = job.attempt();
    if (outcome === 'success') {
      this.done.push(job);
      return 'done';
    }
    if (outcome === 'transient' && n < this.max) {
      this.ready.push(job);
      return 'retry';
    }
    job.reason = outcome === 'permanent' ? 'permanent' : 'exhausted';
    this.dead.push(job);
    return 'dead';
  }

  replay(jobId: string): boolean {
    const i = this.dead.findIndex((j) => j.id === jobId);
    if (i === -1) return false;
    const [job] = this.dead.splice(i, 1);
    job.reset();
    this.ready.push(job);
    return true;
  }

  state() {
    return JSON.parse(
      JSON.stringify({ ready: this.ready, done: this.done.map((j) => j.id), quarantine: this.dead }),
    );
  }
}
