// breaks: dlq-consumer/entry-fields; mistake: reads the clock for failedAt when the message arrives, before calling the handler, so the time a failing call takes is left out
import { PermanentError, Crash, FakeClock, FakeDLQ, FakeQueue } from './given';

type Message = { id: string; body: unknown; receiveCount: number; firstReceivedAt: number };
type Entry = {
  id: string; body: unknown; reason: 'poison' | 'permanent' | 'exhausted'; error: string | null;
  attempts: number; firstAttemptAt: number; failedAt: number;
};
type Outcome = 'success' | 'transient' | 'permanent';
type Job = { id: string; payload: string; attempts: number };
type DeadJob = Job & { reason: 'permanent' | 'exhausted' };

export class DLQConsumer {
  private failedAt = 0;

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
    // The mistake: the time of failure is read when the message arrives, before the handler runs.
    this.failedAt = this.clock.now();
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
      failedAt: this.failedAt,
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
