// debug_typeerror.mjs in TypeScript, typed by the shim's given.d.ts (Message included): it logs while it works, and its helper throws a TypeError when it dead-letters (it reads `msg.meta.firstReceivedAt`).
import { PermanentError, Crash, FakeClock, FakeDLQ, FakeQueue, type Message } from './given';

interface WithMeta {
  meta: { firstReceivedAt: number };
}

function firstAttempt(msg: Message): number {
  return (msg as unknown as WithMeta).meta.firstReceivedAt;
}

export class DLQConsumer {
  constructor(
    private queue: FakeQueue,
    private dlq: FakeDLQ,
    private handler: (body: unknown) => void,
    private clock: FakeClock,
    private maxAttempts = 3,
  ) {}

  processOne(): string | null {
    const msg: Message | null = this.queue.receive();
    if (msg === null) return null;
    console.log('DEBUG got', msg.id);
    if (this.dlq.has(msg.id)) {
      this.queue.ack(msg.id);
      return 'dead';
    }
    if (msg.receiveCount > this.maxAttempts) return this.deadLetter(msg, 'poison', null, msg.receiveCount - 1);
    try {
      this.handler(msg.body);
    } catch (e) {
      if (e instanceof Crash) throw e;
      if (e instanceof PermanentError) return this.deadLetter(msg, 'permanent', e, msg.receiveCount);
      if (msg.receiveCount < this.maxAttempts) {
        this.queue.retry(msg.id);
        return 'retry';
      }
      return this.deadLetter(msg, 'exhausted', e as Error, msg.receiveCount);
    }
    this.queue.ack(msg.id);
    return 'ok';
  }

  private deadLetter(msg: Message, reason: string, error: Error | null, attempts: number): string {
    console.error(`WARN dead-lettering ${msg.id}`);
    const entry = {
      id: msg.id, body: msg.body, reason,
      error: error === null ? null : `${error.name}: ${error.message}`,
      attempts, firstAttemptAt: firstAttempt(msg), failedAt: this.clock.now(),
    };
    this.dlq.put(entry);
    this.queue.ack(msg.id);
    return 'dead';
  }

  replay(): string[] {
    return [];
  }
}
