# RetryQueue only, Python: one dict of job records with a "where" field and a sequence number for tail order (no per-state lists); validation via a set after an isinstance(str) guard; state() rebuilt by sorting, copied by hand.
import itertools


class RetryQueue:
    OUTCOMES = {"success", "transient", "permanent"}

    def __init__(self, max_attempts):
        ok = isinstance(max_attempts, int) and not isinstance(max_attempts, bool) and max_attempts >= 1
        if not ok:
            raise ValueError("max_attempts: need an integer of at least 1")
        self.max_attempts = max_attempts
        self._tick = itertools.count()
        self._records = {}

    def _place(self, rec, where):
        rec["where"] = where
        rec["seq"] = next(self._tick)

    def _in(self, where):
        return sorted((r for r in self._records.values() if r["where"] == where), key=lambda r: r["seq"])

    def submit(self, job_id, payload):
        rec = {"id": job_id, "payload": payload, "attempts": 0, "reason": None}
        self._place(rec, "ready")
        self._records[job_id] = rec

    def process(self, outcome):
        if not (isinstance(outcome, str) and outcome in self.OUTCOMES):
            raise ValueError("bad outcome")
        ready = self._in("ready")
        if not ready:
            return None
        rec = ready[0]
        rec["attempts"] = rec["attempts"] + 1
        if outcome == "success":
            self._place(rec, "done")
            return "done"
        if outcome == "permanent":
            rec["reason"] = "permanent"
            self._place(rec, "quarantine")
            return "dead"
        if rec["attempts"] < self.max_attempts:
            self._place(rec, "ready")
            return "retry"
        rec["reason"] = "exhausted"
        self._place(rec, "quarantine")
        return "dead"

    def replay(self, job_id):
        rec = self._records.get(job_id) if isinstance(job_id, str) else None
        if rec is None or rec["where"] != "quarantine":
            return False
        rec["reason"] = None
        rec["attempts"] = 0
        self._place(rec, "ready")
        return True

    def state(self):
        return {
            "ready": [{"id": r["id"], "payload": r["payload"], "attempts": r["attempts"]} for r in self._in("ready")],
            "done": [r["id"] for r in self._in("done")],
            "quarantine": [
                {"id": r["id"], "payload": r["payload"], "attempts": r["attempts"], "reason": r["reason"]}
                for r in self._in("quarantine")
            ],
        }
