// breaks: outcome-queue/state-deep-copy; mistake: copies the lists but shares the job objects, so editing state().ready[0] edits the queue.
type Outcome = 'success' | 'transient' | 'permanent';
type Job = { id: string; payload: string; attempts: number };
type DeadJob = Job & { reason: 'permanent' | 'exhausted' };

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
    // BUG: new arrays, but the same job objects inside them
    return { ready: [...this.ready], done: [...this.done], quarantine: [...this.quarantine] };
  }
}
