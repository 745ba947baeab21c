// Both contracts, TypeScript: typed Message/Entry from given; dedupe via dlq.has(id); replay reads entries() once up front, send-then-remove per id, duplicates by re-checking a local "still in DLQ" set; RetryQueue with a typed Map<string, Job> + order arrays, state() via structuredClone, a type-guard outcome check.
import { PermanentError, Crash, FakeQueue, FakeDLQ, FakeClock, Message, Entry } from './given';

type Reason = Entry['reason'];

export class DLQConsumer {
  constructor(
    private readonly queue: FakeQueue,
    private readonly dlq: FakeDLQ,
    private readonly handler: (body: unknown) => unknown,
    private readonly clock: FakeClock,
    private readonly maxAttempts: number = 3,
  ) {}

  processOne(): 'ok' | 'retry' | 'dead' | null {
    const msg: Message | null = this.queue.receive();
    if (msg === null || msg === undefined) return null;
    if (this.dlq.has(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    if (msg.receiveCount > this.maxAttempts) {
      return this.deadLetter(msg, 'poison', null, msg.receiveCount - 1);
    }
    try {
      this.handler(msg.body);
    } catch (e: unknown) {
      if (e instanceof Crash) throw e;
      const err = e as Error;
      const text = `${err.name}: ${err.message}`;
      if (e instanceof PermanentError) return this.deadLetter(msg, 'permanent', text, msg.receiveCount);
      if (msg.receiveCount < this.maxAttempts) {
        this.queue.retry(msg.id);
        return 'retry';
      }
      return this.deadLetter(msg, 'exhausted', text, msg.receiveCount);
    }
    this.queue.ack(msg.id);
    return 'ok';
  }

  private deadLetter(msg: Message, reason: Reason, error: string | null, attempts: number): 'dead' {
    const entry: Entry = {
      id: msg.id,
      body: msg.body,
      reason,
      error,
      attempts,
      firstAttemptAt: msg.firstReceivedAt,
      failedAt: this.clock.now(),
    };
    this.dlq.put(entry);
    this.queue.ack(msg.id);
    return 'dead';
  }

  replay(ids?: string[] | null): string[] {
    const all: Entry[] = this.dlq.entries();
    const stillThere = new Set<string>(all.map((e) => e.id));
    const order: string[] = ids ?? [...stillThere];
    const replayed: string[] = [];
    for (const id of order) {
      if (!stillThere.has(id)) continue;
      const entry = all.find((e) => e.id === id)!;
      this.queue.send(id, entry.body);
      this.dlq.remove(id);
      stillThere.delete(id);
      replayed.push(id);
    }
    return replayed;
  }
}

type Outcome = 'success' | 'transient' | 'permanent';
type Job = { id: string; payload: string; attempts: number; reason?: 'permanent' | 'exhausted' };

function isOutcome(x: unknown): x is Outcome {
  return x === 'success' || x === 'transient' || x === 'permanent';
}

export class RetryQueue {
  private readonly jobs = new Map<string, Job>();
  private ready: string[] = [];
  private done: string[] = [];
  private quarantine: string[] = [];
  private readonly maxAttempts: number;

  constructor(maxAttempts: number) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer >= 1 (got ${String(maxAttempts)})`);
    }
    this.maxAttempts = maxAttempts;
  }

  submit(jobId: string, payload: string): void {
    this.jobs.set(jobId, { id: jobId, payload, attempts: 0 });
    this.ready.push(jobId);
  }

  process(outcome: unknown): 'done' | 'retry' | 'dead' | null {
    if (!isOutcome(outcome)) throw new RangeError(`invalid outcome: ${String(outcome)}`);
    const id = this.ready.shift();
    if (id === undefined) return null;
    const job = this.jobs.get(id)!;
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

  replay(jobId: string): boolean {
    const at = this.quarantine.indexOf(jobId);
    if (at < 0) return false;
    this.quarantine.splice(at, 1);
    const job = this.jobs.get(jobId)!;
    delete job.reason;
    job.attempts = 0;
    this.ready.push(jobId);
    return true;
  }

  state(): { ready: Job[]; done: string[]; quarantine: Required<Job>[] } {
    return structuredClone({
      ready: this.ready.map((id) => this.jobs.get(id)!),
      done: this.done,
      quarantine: this.quarantine.map((id) => this.jobs.get(id)! as Required<Job>),
    });
  }
}
