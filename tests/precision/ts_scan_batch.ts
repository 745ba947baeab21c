// Both contracts, TypeScript: ES private fields; dedupe by scanning dlq.entries() and reading queue.pending() + clock.now() for a trace; replay = one entries() read, send all selected ids in order, then remove all (batch); RetryQueue with #ready/#done/#quarantine arrays, Object.hasOwn on a const table after typeof, hand-built state().
import { PermanentError, Crash } from './given';
import type { FakeQueue, FakeDLQ, FakeClock, Message, Entry } from './given';

type Handler = (body: unknown) => void;

export class DLQConsumer {
  #queue: FakeQueue;
  #dlq: FakeDLQ;
  #handler: Handler;
  #clock: FakeClock;
  #maxAttempts: number;
  trace: string[] = [];

  constructor(queue: FakeQueue, dlq: FakeDLQ, handler: Handler, clock: FakeClock, maxAttempts = 3) {
    this.#queue = queue;
    this.#dlq = dlq;
    this.#handler = handler;
    this.#clock = clock;
    this.#maxAttempts = maxAttempts;
  }

  processOne(): string | null {
    const m = this.#queue.receive();
    if (!m) {
      this.trace.push(`idle @${this.#clock.now()} pending=${this.#queue.pending().length}`);
      return null;
    }
    this.trace.push(`recv ${m.id} #${m.receiveCount} @${this.#clock.now()} next=${this.#queue.pending()[0] ?? '-'}`);
    const alreadyDead = this.#dlq.entries().filter((e) => e.id === m.id).length > 0;
    if (alreadyDead) {
      this.#queue.ack(m.id);
      return 'dead';
    }
    if (m.receiveCount > this.#maxAttempts) return this.#deadLetter(m, 'poison', null, m.receiveCount - 1);

    let caught: { err: Error } | undefined;
    try {
      this.#handler(m.body);
    } catch (e) {
      if (e instanceof Crash) throw e;
      caught = { err: e as Error };
    }
    if (!caught) {
      this.#queue.ack(m.id);
      return 'ok';
    }
    const { err } = caught;
    const error = `${err.name}: ${err.message}`;
    if (err instanceof PermanentError) return this.#deadLetter(m, 'permanent', error, m.receiveCount);
    if (m.receiveCount >= this.#maxAttempts) return this.#deadLetter(m, 'exhausted', error, m.receiveCount);
    this.#queue.retry(m.id);
    return 'retry';
  }

  #deadLetter(m: Message, reason: Entry['reason'], error: string | null, attempts: number): 'dead' {
    const failedAt = this.#clock.now();
    this.#dlq.put({ id: m.id, body: m.body, reason, error, attempts, firstAttemptAt: m.firstReceivedAt, failedAt });
    this.#queue.ack(m.id);
    this.trace.push(`dead ${m.id} ${reason} @${this.#clock.now()}`);
    return 'dead';
  }

  replay(ids?: readonly string[] | null): string[] {
    const snapshot = this.#dlq.entries();
    const firstById = new Map<string, Entry>();
    for (const e of snapshot) if (!firstById.has(e.id)) firstById.set(e.id, e);
    const requested = ids == null ? Array.from(firstById.keys()) : ids;
    const selected = requested.filter((id, i) => firstById.has(id) && requested.indexOf(id) === i);
    for (const id of selected) this.#queue.send(id, firstById.get(id)!.body);
    for (const id of selected) this.#dlq.remove(id);
    return selected;
  }
}

const RESULT = { success: 'done', transient: 'retry', permanent: 'dead' } as const;
type Outcome = keyof typeof RESULT;

interface ReadyJob { id: string; payload: string; attempts: number }
interface DeadJob extends ReadyJob { reason: 'permanent' | 'exhausted' }

export class RetryQueue {
  readonly #max: number;
  #ready: ReadyJob[] = [];
  #done: string[] = [];
  #quarantine: DeadJob[] = [];

  constructor(maxAttempts: number) {
    if (typeof maxAttempts !== 'number' || !Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError('maxAttempts must be a positive integer');
    }
    this.#max = maxAttempts;
  }

  submit(jobId: string, payload: string): void {
    this.#ready.push({ id: jobId, payload, attempts: 0 });
  }

  process(outcome: Outcome): string | null {
    if (typeof outcome !== 'string' || !Object.hasOwn(RESULT, outcome)) {
      throw new RangeError(`unknown outcome ${JSON.stringify(outcome)}`);
    }
    if (this.#ready.length === 0) return null;
    const job = this.#ready.shift()!;
    job.attempts += 1;
    if (outcome === 'success') {
      this.#done.push(job.id);
    } else if (outcome === 'permanent') {
      this.#quarantine.push({ ...job, reason: 'permanent' });
    } else if (job.attempts < this.#max) {
      this.#ready.push(job);
    } else {
      this.#quarantine.push({ ...job, reason: 'exhausted' });
      return 'dead';
    }
    return RESULT[outcome];
  }

  replay(jobId: string): boolean {
    const before = this.#quarantine.length;
    const kept = this.#quarantine.filter((j) => j.id !== jobId);
    if (kept.length === before) return false;
    const job = this.#quarantine.find((j) => j.id === jobId)!;
    this.#quarantine = kept;
    this.#ready.push({ id: job.id, payload: job.payload, attempts: 0 });
    return true;
  }

  state() {
    return {
      ready: this.#ready.map(({ id, payload, attempts }) => ({ id, payload, attempts })),
      done: [...this.#done],
      quarantine: this.#quarantine.map(({ id, payload, attempts, reason }) => ({ id, payload, attempts, reason })),
    };
  }
}
