// solution.ts: reference solution of both dlqspec contracts in TypeScript (DLQConsumer: dlq-consumer, RetryQueue: outcome-queue).
import { PermanentError, Crash, FakeClock, FakeDLQ, FakeQueue } from './given.js';

type Message = { id: string; body: unknown; receiveCount: number; firstReceivedAt: number };
type Entry = {
  id: string; body: unknown; reason: 'poison' | 'permanent' | 'exhausted'; error: string | null;
  attempts: number; firstAttemptAt: number; failedAt: number;
};
type Outcome = 'success' | 'transient' | 'permanent';
type Job = { id: string; payload: string; attempts: number };
type DeadJob = Job & { reason: 'permanent' | 'exhausted' };

export class DLQConsumer {
  constructor(
    private queue: FakeQueue,
    private dlq: FakeDLQ,
    private handler: (body: unknown) => void,
    private clock: FakeClock,
    private maxAttempts = 3,
  ) {}

  processOne(): 'ok' | 'retry' | 'dead' | null {
    const msg: Message | null = this.queue.receive();
    if (msg === null) return null;
    // An earlier delivery died between dlq.put and the ack: finish that ack, never put twice.
    if (this.dlq.has(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    // Every earlier delivery died mid-handler (a Crash): don't give it another go.
    if (msg.receiveCount > this.maxAttempts) return this.deadLetter(msg, 'poison', null, msg.receiveCount - 1);
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof Crash) throw e; // the process dying: JavaScript has no BaseException to do this for us
      if (e instanceof PermanentError) return this.deadLetter(msg, 'permanent', e, msg.receiveCount);
      // The queue's receiveCount survives restarts; a counter of our own would not.
      if (msg.receiveCount < this.maxAttempts) {
        this.queue.retry(msg.id);
        return 'retry';
      }
      return this.deadLetter(msg, 'exhausted', e as Error, msg.receiveCount);
    }
    this.queue.ack(msg.id);
    return 'ok';
  }

  private deadLetter(msg: Message, reason: Entry['reason'], error: Error | null, attempts: number): 'dead' {
    const entry: Entry = {
      id: msg.id,
      body: msg.body,
      reason,
      error: error === null ? null : `${error.name}: ${error.message}`,
      attempts,
      firstAttemptAt: msg.firstReceivedAt,
      failedAt: this.clock.now(),
    };
    this.dlq.put(entry);
    // put before ack: dying in between redelivers it, and the dedupe check above finishes the job.
    this.queue.ack(msg.id);
    return 'dead';
  }

  replay(ids?: string[]): string[] {
    const bodies = new Map<string, unknown>();
    for (const e of this.dlq.entries() as Entry[]) if (!bodies.has(e.id)) bodies.set(e.id, e.body);
    const replayed: string[] = [];
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

const OUTCOMES: readonly unknown[] = ['success', 'transient', 'permanent'];

export class RetryQueue {
  private readonly max: number;
  private ready: Job[] = [];
  private done: string[] = [];
  private quarantine: DeadJob[] = [];

  constructor(maxAttempts: number) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer >= 1, got ${JSON.stringify(maxAttempts)}`);
    }
    this.max = maxAttempts;
  }

  submit(jobId: string, payload: string): void {
    this.ready.push({ id: jobId, payload, attempts: 0 });
  }

  process(outcome: Outcome): 'done' | 'retry' | 'dead' | null {
    // Validate before touching anything: a bad outcome must not cost a job its place.
    if (!OUTCOMES.includes(outcome)) throw new RangeError(`outcome must be one of ${OUTCOMES.join(', ')}, got ${JSON.stringify(outcome)}`);
    const job = this.ready.shift();
    if (job === undefined) return null;
    job.attempts += 1; // count the attempt before deciding what budget is left
    if (outcome === 'success') {
      this.done.push(job.id);
      return 'done';
    }
    if (outcome === 'transient' && job.attempts < this.max) {
      this.ready.push(job);
      return 'retry';
    }
    this.quarantine.push({ ...job, reason: outcome === 'permanent' ? 'permanent' : 'exhausted' });
    return 'dead';
  }

  replay(jobId: string): boolean {
    const i = this.quarantine.findIndex((job) => job.id === jobId);
    if (i < 0) return false;
    const [job] = this.quarantine.splice(i, 1);
    this.ready.push({ id: job.id, payload: job.payload, attempts: 0 });
    return true;
  }

  state(): { ready: Job[]; done: string[]; quarantine: DeadJob[] } {
    // A deep copy: callers inspecting diagnostics must not rewrite the queue.
    return structuredClone({ ready: this.ready, done: this.done, quarantine: this.quarantine });
  }
}
