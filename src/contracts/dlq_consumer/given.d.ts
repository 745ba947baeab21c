// given.d.ts: TypeScript types of the lesson's given module (what `import ... from "given"` or "./given" provides under dlqspec).

export class PermanentError extends Error {}
export class TransientError extends Error {}
/** The process dying mid-handler. JavaScript has no BaseException: a consumer must rethrow it. */
export class Crash extends Error {}
/** Raised by the world when the consumer misuses it (e.g. acks an id that is not in flight). */
export class MisuseError extends Error {}

export interface Message {
  id: string;
  body: unknown;
  /** 1 on the first delivery; kept across retry and recover. */
  receiveCount: number;
  firstReceivedAt: number;
}

export interface Entry {
  id: string;
  body: unknown;
  reason: 'poison' | 'permanent' | 'exhausted';
  /** `${e.name}: ${e.message}`, or null for poison. */
  error: string | null;
  attempts: number;
  firstAttemptAt: number;
  failedAt: number;
}

export class FakeClock {
  now(): number;
  advance(n: number): void;
}

export class FakeQueue {
  constructor(clock: FakeClock);
  send(id: string, body: unknown): void;
  receive(): Message | null;
  ack(id: string): void;
  retry(id: string): void;
  recover(): void;
  pending(): string[];
}

export class FakeDLQ {
  put(entry: Entry): void;
  has(id: string): boolean;
  /** Removes every entry with this id; true if there were any. */
  remove(id: string): boolean;
  entries(): Entry[];
}
