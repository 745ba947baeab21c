# breaks: outcome-queue/outcome-validated-first; mistake: pops the ready head before validating the outcome, so a bad outcome loses that job.
import copy


OUTCOMES = ("success", "transient", "permanent")


class RetryQueue:
    """A job queue that applies the caller's outcome for each attempt (lesson 001)."""

    def __init__(self, max_attempts):
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
        self.max_attempts = max_attempts
        self.ready = []
        self.done = []
        self.quarantine = []

    def submit(self, job_id, payload):
        self.ready.append({"id": job_id, "payload": payload, "attempts": 0})

    def process(self, outcome):
        job = self.ready.pop(0) if self.ready else None  # BUG: taken off the queue before the outcome is checked
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
        if job is None:
            return None
        job["attempts"] += 1  # count the attempt before deciding what budget is left
        if outcome == "success":
            self.done.append(job["id"])
            return "done"
        if outcome == "transient" and job["attempts"] < self.max_attempts:
            self.ready.append(job)
            return "retry"
        job["reason"] = outcome if outcome == "permanent" else "exhausted"
        self.quarantine.append(job)
        return "dead"

    def replay(self, job_id):
        for i, job in enumerate(self.quarantine):
            if job["id"] == job_id:
                del self.quarantine[i]
                self.ready.append({"id": job["id"], "payload": job["payload"], "attempts": 0})
                return True
        return False

    def state(self):
        # A deep copy: callers inspecting diagnostics must not rewrite the queue.
        return copy.deepcopy({"ready": self.ready, "done": self.done, "quarantine": self.quarantine})
