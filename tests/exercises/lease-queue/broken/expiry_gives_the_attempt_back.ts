// breaks lease-runs-out: an expired lease takes its attempt back, so a job that kills its workers is handed out for ever
interface Clock { now(): number }
interface EffectsLog { apply(key: string, value: string): void }

type Outcome = 'success' | 'transient' | 'permanent';
type Reason = 'permanent' | 'exhausted' | 'expired';

interface Job {
  id: string;
  account: string;
  payload: string;
  attempts: number;
  order: number;
  worker?: string;
  until?: number;
  due?: number;
  reason?: Reason;
}

interface Snapshot {
  budget: number;
  lease: number;
  backoff: number;
  order: number;
  jobs: Job[];
  lists: { queued: string[]; waiting: string[]; leased: string[]; quarantine: string[]; done: string[] };
}

export class StaleLease extends Error {}

function positiveInteger(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be an integer of at least 1`);
  }
  return value as number;
}

export class LeaseQueue {
  private readonly jobs = new Map<string, Job>();
  private queued: string[] = [];
  private waiting: string[] = [];
  private leased: string[] = [];
  private quarantine: string[] = [];
  private done: string[] = [];
  private order = 0;
  private readonly budget: number;
  private readonly lease: number;
  private readonly backoff: number;

  constructor(private readonly clock: Clock, private readonly effects: EffectsLog, budget: unknown, lease: unknown, backoff: unknown) {
    this.budget = positiveInteger('budget', budget);
    this.lease = positiveInteger('lease', lease);
    this.backoff = positiveInteger('backoff', backoff);
  }

  private byOrder = (a: string, b: string): number => this.jobs.get(a)!.order - this.jobs.get(b)!.order;

  private put(list: string[], id: string): void {
    list.push(id);
    list.sort(this.byOrder);
  }

  private advanceTime(): void {
    const now = this.clock.now();
    for (const id of this.leased.filter((id) => now >= this.jobs.get(id)!.until!)) {
      const job = this.jobs.get(id)!;
      this.leased = this.leased.filter((other) => other !== id);
      delete job.worker;
      delete job.until;
      job.attempts -= 1;
      if (job.attempts >= this.budget) {
        job.reason = 'expired';
        this.put(this.quarantine, id);
      } else {
        this.put(this.queued, id);
      }
    }
    for (const id of this.waiting.filter((id) => now >= this.jobs.get(id)!.due!)) {
      delete this.jobs.get(id)!.due;
      this.waiting = this.waiting.filter((other) => other !== id);
      this.put(this.queued, id);
    }
  }

  private isHeld(id: string): boolean {
    const job = this.jobs.get(id)!;
    return [...this.queued, ...this.waiting, ...this.leased].some((other) => {
      const o = this.jobs.get(other)!;
      return o.account === job.account && o.order < job.order;
    });
  }

  submit(jobId: string, account: string, payload: string): boolean {
    this.advanceTime();
    if (this.jobs.has(jobId) || this.done.includes(jobId)) return false;
    this.jobs.set(jobId, { id: jobId, account, payload, attempts: 0, order: this.order++ });
    this.put(this.queued, jobId);
    return true;
  }

  take(worker: string): string | null {
    this.advanceTime();
    const id = this.queued.find((candidate) => !this.isHeld(candidate));
    if (id === undefined) return null;
    const job = this.jobs.get(id)!;
    this.queued = this.queued.filter((other) => other !== id);
    job.attempts += 1;
    job.worker = worker;
    job.until = this.clock.now() + this.lease;
    this.put(this.leased, id);
    return id;
  }

  finish(jobId: string, worker: string, outcome: Outcome): 'done' | 'retry' | 'dead' {
    if (outcome !== 'success' && outcome !== 'transient' && outcome !== 'permanent') {
      throw new RangeError(`not an outcome: ${String(outcome)}`);
    }
    this.advanceTime();
    const job = this.jobs.get(jobId);
    if (!job || !this.leased.includes(jobId) || job.worker !== worker) {
      throw new StaleLease(`${worker} has no lease on ${jobId}`);
    }
    this.leased = this.leased.filter((other) => other !== jobId);
    delete job.worker;
    delete job.until;
    switch (outcome) {
      case 'success':
        this.jobs.delete(jobId);
        this.done.push(jobId);
        this.effects.apply(job.account, job.payload);
        return 'done';
      case 'permanent':
        job.reason = 'permanent';
        this.put(this.quarantine, jobId);
        return 'dead';
      default:
        if (job.attempts >= this.budget) {
          job.reason = 'exhausted';
          this.put(this.quarantine, jobId);
          return 'dead';
        }
        job.due = this.clock.now() + this.backoff * Math.pow(2, job.attempts - 1);
        this.put(this.waiting, jobId);
        return 'retry';
    }
  }

  replay(jobId: string): boolean {
    this.advanceTime();
    if (!this.quarantine.includes(jobId)) return false;
    const job = this.jobs.get(jobId)!;
    this.quarantine = this.quarantine.filter((other) => other !== jobId);
    delete job.reason;
    job.attempts = 0;
    job.order = this.order++;
    this.put(this.queued, jobId);
    return true;
  }

  state() {
    this.advanceTime();
    const entry = (id: string) => {
      const { id: jobId, account, payload, attempts } = this.jobs.get(id)!;
      return { id: jobId, account, payload, attempts };
    };
    return {
      ready: this.queued.filter((id) => !this.isHeld(id)).map(entry),
      held: this.queued.filter((id) => this.isHeld(id)).map(entry),
      waiting: this.waiting.map((id) => ({ ...entry(id), due: this.jobs.get(id)!.due! })),
      leased: this.leased.map((id) => ({ ...entry(id), worker: this.jobs.get(id)!.worker!, until: this.jobs.get(id)!.until! })),
      done: [...this.done],
      quarantine: this.quarantine.map((id) => ({ ...entry(id), reason: this.jobs.get(id)!.reason! })),
    };
  }

  policy(): { budget: number; lease: number; backoff: number } {
    return { budget: this.budget, lease: this.lease, backoff: this.backoff };
  }

  snapshot(): Snapshot {
    this.advanceTime();
    return {
      budget: this.budget,
      lease: this.lease,
      backoff: this.backoff,
      order: this.order,
      jobs: [...this.jobs.values()].map((job) => ({ ...job })),
      lists: { queued: [...this.queued], waiting: [...this.waiting], leased: [...this.leased], quarantine: [...this.quarantine], done: [...this.done] },
    };
  }

  static fromSnapshot(snapshot: Snapshot, clock: Clock, effects: EffectsLog): LeaseQueue {
    const queue = new LeaseQueue(clock, effects, snapshot.budget, snapshot.lease, snapshot.backoff);
    queue.order = snapshot.order;
    for (const job of snapshot.jobs) queue.jobs.set(job.id, { ...job });
    queue.queued = [...snapshot.lists.queued];
    queue.waiting = [...snapshot.lists.waiting];
    queue.leased = [...snapshot.lists.leased];
    queue.quarantine = [...snapshot.lists.quarantine];
    queue.done = [...snapshot.lists.done];
    return queue;
  }
}
