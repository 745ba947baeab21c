// breaks policy-validated: a policy number of 0 is accepted, making a queue whose jobs can never be taken or never wait
class StaleLease extends Error {}

const OUTCOMES = new Set(['success', 'transient', 'permanent']);

function whole(name, value) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be an integer of at least 1, not ${JSON.stringify(value)}`);
  }
  return value;
}

export class LeaseQueue {
  #clock;
  #effects;
  #policy;
  #jobs = new Map(); // id -> {id, account, payload, attempts, seq, worker, until, due, reason}
  #done = [];
  #seq = 0;

  constructor(clock, effects, budget, lease, backoff) {
    this.#policy = { budget: whole('budget', budget), lease: whole('lease', lease), backoff: whole('backoff', backoff) };
    this.#clock = clock;
    this.#effects = effects;
  }

  #statusOf(job, now) {
    if (job.reason !== null) return 'quarantine';
    if (job.until !== null) {
      if (now < job.until) return 'leased';
      return job.attempts >= this.#policy.budget ? 'expired' : 'ready';
    }
    if (job.due !== null && now < job.due) return 'waiting';
    return 'ready';
  }

  #pending() {
    const now = this.#clock.now();
    return [...this.#jobs.values()]
      .map((job) => ({ job, status: this.#statusOf(job, now) }))
      .sort((a, b) => a.job.seq - b.job.seq);
  }

  // The ready jobs, each marked held when an earlier job of its account is not finished.
  #sorted() {
    const busy = new Set();
    return this.#pending().map(({ job, status }) => {
      let shown = status === 'expired' ? 'quarantine' : status;
      if (shown === 'ready' && busy.has(job.account)) shown = 'held';
      if (shown !== 'quarantine') busy.add(job.account);
      return { job, status, shown };
    });
  }

  submit(jobId, account, payload) {
    if (this.#jobs.has(jobId) || this.#done.includes(jobId)) return false;
    this.#jobs.set(jobId, { id: jobId, account, payload, attempts: 0, seq: this.#seq++, worker: null, until: null, due: null, reason: null });
    return true;
  }

  take(worker) {
    const next = this.#sorted().find((s) => s.shown === 'ready');
    if (!next) return null;
    const { job } = next;
    job.attempts += 1;
    job.worker = worker;
    job.until = this.#clock.now() + this.#policy.lease;
    job.due = null;
    return job.id;
  }

  finish(jobId, worker, outcome) {
    if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) {
      throw new RangeError(`outcome must be success, transient or permanent, not ${JSON.stringify(outcome)}`);
    }
    const job = this.#jobs.get(jobId);
    const now = this.#clock.now();
    if (!job || this.#statusOf(job, now) !== 'leased' || job.worker !== worker) {
      throw new StaleLease(`${worker} holds no running lease on ${jobId}`);
    }
    job.worker = null;
    job.until = null;
    if (outcome === 'success') {
      this.#jobs.delete(jobId);
      this.#done.push(jobId);
      this.#effects.apply(job.account, job.payload);
      return 'done';
    }
    if (outcome === 'permanent') {
      job.reason = 'permanent';
      return 'dead';
    }
    if (job.attempts >= this.#policy.budget) {
      job.reason = 'exhausted';
      return 'dead';
    }
    job.due = now + this.#policy.backoff * 2 ** (job.attempts - 1);
    return 'retry';
  }

  replay(jobId) {
    const job = this.#jobs.get(jobId);
    if (!job) return false;
    const status = this.#statusOf(job, this.#clock.now());
    if (status !== 'quarantine' && status !== 'expired') return false;
    Object.assign(job, { attempts: 0, seq: this.#seq++, worker: null, until: null, due: null, reason: null });
    return true;
  }

  state() {
    const view = { ready: [], held: [], waiting: [], leased: [], done: [...this.#done], quarantine: [] };
    for (const { job, status, shown } of this.#sorted()) {
      const base = { id: job.id, account: job.account, payload: job.payload, attempts: job.attempts };
      if (shown === 'waiting') view.waiting.push({ ...base, due: job.due });
      else if (shown === 'leased') view.leased.push({ ...base, worker: job.worker, until: job.until });
      else if (shown === 'quarantine') view.quarantine.push({ ...base, reason: status === 'expired' ? 'expired' : job.reason });
      else view[shown].push(base);
    }
    return view;
  }

  policy() {
    return { ...this.#policy };
  }

  snapshot() {
    return JSON.parse(JSON.stringify({ policy: this.#policy, seq: this.#seq, done: this.#done, jobs: [...this.#jobs.values()] }));
  }

  static fromSnapshot(snapshot, clock, effects) {
    const { budget, lease, backoff } = snapshot.policy;
    const queue = new LeaseQueue(clock, effects, budget, lease, backoff);
    queue.#seq = snapshot.seq;
    queue.#done = [...snapshot.done];
    for (const job of snapshot.jobs) queue.#jobs.set(job.id, { ...job });
    return queue;
  }
}
