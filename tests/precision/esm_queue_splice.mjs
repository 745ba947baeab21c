// RetryQueue only, ESM: one array of records with a `where` tag, ready head found with findIndex and moved with splice; outcome validated with typeof + Object.hasOwn on a frozen null-prototype table; state() built by hand.
const NEXT = Object.freeze(Object.assign(Object.create(null), {
  success: 'done',
  transient: 'retry',
  permanent: 'dead',
}));

export class RetryQueue {
  constructor(maxAttempts) {
    const ok = typeof maxAttempts === 'number' && Number.isFinite(maxAttempts)
      && Math.floor(maxAttempts) === maxAttempts && maxAttempts >= 1;
    if (!ok) throw new RangeError('maxAttempts must be an integer >= 1');
    this.maxAttempts = maxAttempts;
    this.records = [];
  }

  submit(jobId, payload) {
    this.records.push({ where: 'ready', id: jobId, payload, attempts: 0, reason: null });
  }

  process(outcome) {
    if (typeof outcome !== 'string' || !Object.hasOwn(NEXT, outcome)) {
      throw new RangeError(`invalid outcome: ${String(outcome)}`);
    }
    const at = this.records.findIndex((r) => r.where === 'ready');
    if (at === -1) return null;
    const [rec] = this.records.splice(at, 1);
    rec.attempts += 1;
    let result = NEXT[outcome];
    if (outcome === 'success') {
      rec.where = 'done';
    } else if (outcome === 'permanent') {
      rec.where = 'quarantine';
      rec.reason = 'permanent';
    } else if (rec.attempts < this.maxAttempts) {
      rec.where = 'ready';
    } else {
      rec.where = 'quarantine';
      rec.reason = 'exhausted';
      result = 'dead';
    }
    this.records.push(rec); // tail of whichever list it now belongs to
    return result;
  }

  replay(jobId) {
    const at = this.records.findIndex((r) => r.where === 'quarantine' && r.id === jobId);
    if (at === -1) return false;
    const [rec] = this.records.splice(at, 1);
    rec.where = 'ready';
    rec.reason = null;
    rec.attempts = 0;
    this.records.push(rec);
    return true;
  }

  state() {
    const view = { ready: [], done: [], quarantine: [] };
    for (const r of this.records) {
      if (r.where === 'ready') view.ready.push({ id: r.id, payload: r.payload, attempts: r.attempts });
      else if (r.where === 'done') view.done.push(r.id);
      else view.quarantine.push({ id: r.id, payload: r.payload, attempts: r.attempts, reason: r.reason });
    }
    return view;
  }
}
