# breaks empty-returns-none: takes a quarantined job when nothing else is ready
import copy

OUTCOMES = ("success", "transient", "permanent")


class RetryQueue:
    def __init__(self, max_attempts=3):
        # A bool is an int in Python, and 2.5 or "3" are no budget: only an integer >= 1 is.
        if type(max_attempts) is not int or max_attempts < 1:
            raise ValueError("max_attempts must be an integer >= 1, got %r" % (max_attempts,))
        self._max_attempts = max_attempts
        self._ready = []
        self._done = []
        self._quarantine = []

    def submit(self, job_id, payload):
        self._ready.append({"id": job_id, "payload": payload, "attempts": 0})

    def process(self, outcome):
        # Validated before anything else: an invalid outcome must not cost a job its place.
        # `type(...) is str` first, so a list or a mapping is never compared with a word.
        if type(outcome) is not str or outcome not in OUTCOMES:
            raise ValueError("outcome must be one of %s, got %r" % (", ".join(OUTCOMES), outcome))
        if not self._ready and self._quarantine:
            self._ready.append(self._quarantine.pop(0))
        if not self._ready:
            return None
        job = self._ready.pop(0)
        job["attempts"] += 1  # the attempt counts before the budget is asked
        if outcome == "success":
            self._done.append(job["id"])
            return "done"
        if outcome == "transient" and job["attempts"] < self._max_attempts:
            self._ready.append(job)
            return "retry"
        job["reason"] = "permanent" if outcome == "permanent" else "exhausted"
        self._quarantine.append(job)
        return "dead"

    def replay(self, job_id):
        for i, job in enumerate(self._quarantine):
            if job["id"] == job_id:
                del self._quarantine[i]
                self._ready.append({"id": job["id"], "payload": job["payload"], "attempts": 0})
                return True
        return False

    def state(self):
        # A deep copy: a caller reading diagnostics must not rewrite the queue.
        return copy.deepcopy({"ready": self._ready, "done": self._done, "quarantine": self._quarantine})
