# breaks: outcome-queue/outcome-validated-first; mistake: outcomes are validated with hasattr() on a namespace class, so '__class__', '__doc__', '__init__'... are accepted (and treated as transient)
import copy
from collections import deque

OUTCOMES = ("success", "transient", "permanent")


class Outcome:
    success = "success"
    transient = "transient"
    permanent = "permanent"


class RetryQueue:
    def __init__(self, max_attempts):
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError("max_attempts must be an integer >= 1")
        self.max_attempts = max_attempts
        self.ready = deque()
        self.done = []
        self.quarantine = []

    def submit(self, job_id, payload):
        self.ready.append({"id": job_id, "payload": payload, "attempts": 0})

    def process(self, outcome):
        if not isinstance(outcome, str) or not hasattr(Outcome, outcome):
            raise ValueError(f"invalid outcome: {outcome!r}")
        if not self.ready:
            return None
        job = self.ready.popleft()
        job["attempts"] += 1
        if outcome == "success":
            self.done.append(job["id"])
            return "done"
        if outcome == "permanent":
            job["reason"] = "permanent"
            self.quarantine.append(job)
            return "dead"
        if job["attempts"] < self.max_attempts:
            self.ready.append(job)
            return "retry"
        job["reason"] = "exhausted"
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
        return {
            "ready": copy.deepcopy(list(self.ready)),
            "done": list(self.done),
            "quarantine": copy.deepcopy(self.quarantine),
        }
