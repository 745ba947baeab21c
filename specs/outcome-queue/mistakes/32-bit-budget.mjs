// breaks max-attempts-validated: checks for an integer with (n | 0) === n, which rejects budgets beyond 2^31
const OUTCOMES = ['success', 'transient', 'permanent'];

export class RetryQueue {
  constructor(maxAttempts = 3) {
    if ((maxAttempts | 0) !== maxAttempts || maxAttempts < 1) throw new RangeError(`maxAttempts must be an integer >= 1, got ${maxAttempts}`);
    this.maxAttempts = maxAttempts;
    this.ready = [];
    this.done = [];
    this.quarantine = [];
  }

  submit(jobId, payload) {
    this.ready.push({ id: jobId, payload, attempts: 0 });
  }

  process(outcome) {
    if (!OUTCOMES.includes(outcome)) throw new RangeError(`outcome must be one of ${OUTCOMES}, got ${outcome}`);
    if (this.ready.length === 0) return null;
    const job = this.ready.shift();
    job.attempts += 1;
    if (outcome === 'success') {
      this.done.push(job.id);
      return 'done';
    }
    if (outcome === 'transient' && job.attempts < this.maxAttempts) {
      this.ready.push(job);
      return 'retry';
    }
    job.reason = outcome === 'permanent' ? 'permanent' : 'exhausted';
    this.quarantine.push(job);
    return 'dead';
  }

  replay(jobId) {
    const at = this.quarantine.findIndex((job) => job.id === jobId);
    if (at < 0) return false;
    const [job] = this.quarantine.splice(at, 1);
    this.ready.push({ id: job.id, payload: job.payload, attempts: 0 });
    return true;
  }

  state() {
    return structuredClone({ ready: this.ready, done: this.done, quarantine: this.quarantine });
  }
}
