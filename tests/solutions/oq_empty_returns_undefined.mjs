// breaks: outcome-queue/empty-returns-none; mistake: process ends with a bare `return;` when nothing is ready, which is JavaScript's undefined, not the null the contract pins
const OUTCOMES = ['success', 'transient', 'permanent'];

export class RetryQueue {
  constructor(maxAttempts) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError('maxAttempts must be an integer >= 1');
    }
    this.maxAttempts = maxAttempts;
    this.ready = [];
    this.done = [];
    this.quarantine = [];
  }

  submit(jobId, payload) {
    this.ready.push({ id: jobId, payload, attempts: 0 });
  }

  process(outcome) {
    if (!OUTCOMES.includes(outcome)) {
      throw new RangeError(`invalid outcome: ${String(outcome)}`);
    }
    if (this.ready.length === 0) return;
    const job = this.ready.shift();
    job.attempts += 1;
    if (outcome === 'success') {
      this.done.push(job.id);
      return 'done';
    }
    if (outcome === 'permanent') {
      this.quarantine.push({ ...job, reason: 'permanent' });
      return 'dead';
    }
    if (job.attempts < this.maxAttempts) {
      this.ready.push(job);
      return 'retry';
    }
    this.quarantine.push({ ...job, reason: 'exhausted' });
    return 'dead';
  }

  replay(jobId) {
    const i = this.quarantine.findIndex((j) => j.id === jobId);
    if (i < 0) return false;
    const [job] = this.quarantine.splice(i, 1);
    this.ready.push({ id: job.id, payload: job.payload, attempts: 0 });
    return true;
  }

  state() {
    return {
      ready: this.ready.map((j) => ({ ...j })),
      done: [...this.done],
      quarantine: this.quarantine.map((j) => ({ id: j.id, payload: j.payload, attempts: j.attempts, reason: j.reason })),
    };
  }
}
