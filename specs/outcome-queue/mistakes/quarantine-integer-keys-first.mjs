// breaks permanent-quarantine: keeps the quarantine in a plain JavaScript object keyed by id, which lists ids like "10" and "2" first and in numeric order, not in quarantine order
const OUTCOMES = ['success', 'transient', 'permanent'];

export class RetryQueue {
  constructor(maxAttempts = 3) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError(`maxAttempts must be an integer >= 1, got ${maxAttempts}`);
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
    const byId = {};
    for (const job of this.quarantine) byId[job.id] = job;
    return structuredClone({ ready: this.ready, done: this.done, quarantine: Object.values(byId) });
  }
}
