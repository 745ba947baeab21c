# breaks: outcome-queue/replay-resets; mistake: replay finds the job with a falsy check on its payload, so a job whose payload is the empty string stays in quarantine
import copy

from given import PermanentError


class DLQConsumer:
    """Consumes one message at a time; dead-letters what cannot succeed (lesson 000)."""

    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue
        self.dlq = dlq
        self.handler = handler
        self.clock = clock
        self.max_attempts = max_attempts

    def process_one(self):
        msg = self.queue.receive()
        if msg is None:
            return None
        # An earlier delivery died between dlq.put and the ack: finish that ack, never put twice.
        if self.dlq.has(msg["id"]):
            self.queue.ack(msg["id"])
            return "dead"
        # Every earlier delivery died mid-handler (a Crash): don't give it another go.
        if msg["receive_count"] > self.max_attempts:
            return self._dead_letter(msg, "poison", None, msg["receive_count"] - 1)
        try:
            self.handler(msg["body"])
        except PermanentError as e:
            return self._dead_letter(msg, "permanent", e, msg["receive_count"])
        except Exception as e:  # anything else is transient; Crash (a BaseException) propagates
            # The queue's receive_count survives restarts; a counter of our own would not.
            if msg["receive_count"] < self.max_attempts:
                self.queue.retry(msg["id"])
                return "retry"
            return self._dead_letter(msg, "exhausted", e, msg["receive_count"])
        self.queue.ack(msg["id"])
        return "ok"

    def _dead_letter(self, msg, reason, error, attempts):
        self.dlq.put({
            "id": msg["id"],
            "body": msg["body"],
            "reason": reason,
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "attempts": attempts,
            "first_attempt_at": msg["first_received_at"],
            "failed_at": self.clock.now(),
        })
        # put before ack: dying in between redelivers it, and the dedupe check above finishes the job.
        self.queue.ack(msg["id"])
        return "dead"

    def replay(self, ids=None):
        entries = self.dlq.entries()
        bodies = {}
        for entry in entries:
            bodies.setdefault(entry["id"], entry["body"])
        if ids is None:
            ids = list(bodies)
        replayed = []
        for id_ in ids:
            if id_ not in bodies:
                continue
            # send first: a crash between the two leaves a duplicate, never a lost message.
            self.queue.send(id_, bodies.pop(id_))
            self.dlq.remove(id_)
            replayed.append(id_)
        return replayed


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
        # Validate before touching anything: a bad outcome must not cost a job its place.
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
        if not self.ready:
            return None
        job = self.ready.pop(0)
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
            if job["id"] == job_id and job["payload"]:  # the mistake: an empty payload is falsy
                del self.quarantine[i]
                self.ready.append({"id": job["id"], "payload": job["payload"], "attempts": 0})
                return True
        return False

    def state(self):
        # A deep copy: callers inspecting diagnostics must not rewrite the queue.
        return copy.deepcopy({"ready": self.ready, "done": self.done, "quarantine": self.quarantine})
