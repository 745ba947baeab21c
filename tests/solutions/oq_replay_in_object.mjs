// breaks: outcome-queue/replay-missing-false; mistake: keeps the quarantine in a plain object and replays with `jobId in quarantine`, so replay("toString") returns true
const OUTCOMES = ['success', 'transient', 'permanent'];

export class RetryQueue {
  #max; #ready = []; #done = []; #quarantine = {}; #order = [];

  constructor(maxAttempts) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer >= 1, got ${JSON.stringify(maxAttempts)}`);
    }
    this.#max = maxAttempts;
  }

  submit(jobId, payload) {
    this.#ready.push({ id: jobId, payload, attempts: 0 });
  }

  process(outcome) {
    // Validate before touching anything: a bad outcome must not cost a job its place.
    if (!OUTCOMES.includes(outcome)) throw new RangeError(`outcome must be one of ${OUTCOMES.join(', ')}, got ${JSON.stringify(outcome)}`);
    const job = this.#ready.shift();
    if (job === undefined) return null;
    job.attempts += 1; // count the attempt before deciding what budget is left
    if (outcome === 'success') {
      this.#done.push(job.id);
      return 'done';
    }
    if (outcome === 'transient' && job.attempts < this.#max) {
      this.#ready.push(job);
      return 'retry';
    }
    this.#quarantine[job.id] = { ...job, reason: outcome === 'permanent' ? 'permanent' : 'exhausted' };
    this.#order.push(job.id);
    return 'dead';
  }

  replay(jobId) {
    // The mistake: `in` finds the names every object has, toString and constructor included.
    if (!(jobId in this.#quarantine)) return false;
    const job = this.#quarantine[jobId];
    delete this.#quarantine[jobId];
    this.#order = this.#order.filter((id) => id !== jobId);
    this.#ready.push({ id: job.id, payload: job.payload, attempts: 0 });
    return true;
  }

  state() {
    // A deep copy: callers inspecting diagnostics must not rewrite the queue.
    const quarantine = this.#order.map((id) => this.#quarantine[id]);
    return structuredClone({ ready: this.#ready, done: this.#done, quarantine });
  }
}
