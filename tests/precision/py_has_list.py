# Both contracts (DLQConsumer + RetryQueue), Python: dedupe via one dlq.has(id); replay reads entries() once up front, send-then-remove per id, seen-set; RetryQueue in plain lists, state() via copy.deepcopy, `type(x) is int` validation.
import copy

from given import Crash, PermanentError, TransientError  # noqa: F401  (Crash/TransientError named for readers)


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue
        self.dlq = dlq
        self.handler = handler
        self.clock = clock
        self.max_attempts = max_attempts

    def _dead_letter(self, msg, reason, error, attempts):
        entry = {
            "id": msg["id"],
            "body": msg["body"],
            "reason": reason,
            "error": error,
            "attempts": attempts,
            "first_attempt_at": msg["first_received_at"],
            "failed_at": self.clock.now(),
        }
        self.dlq.put(entry)
        self.queue.ack(msg["id"])
        return "dead"

    def process_one(self):
        msg = self.queue.receive()
        if msg is None:
            return None
        if self.dlq.has(msg["id"]):
            # an earlier delivery died between put and ack
            self.queue.ack(msg["id"])
            return "dead"
        count = msg["receive_count"]
        if count > self.max_attempts:
            return self._dead_letter(msg, "poison", None, count - 1)
        try:
            self.handler(msg["body"])
        except PermanentError as e:
            return self._dead_letter(msg, "permanent", f"{type(e).__name__}: {e}", count)
        except Exception as e:
            if count < self.max_attempts:
                self.queue.retry(msg["id"])
                return "retry"
            return self._dead_letter(msg, "exhausted", f"{type(e).__name__}: {e}", count)
        self.queue.ack(msg["id"])
        return "ok"

    def replay(self, ids=None):
        entries = self.dlq.entries()
        body_of = {}
        order = []
        for e in entries:
            if e["id"] not in body_of:
                body_of[e["id"]] = e["body"]
                order.append(e["id"])
        wanted = order if ids is None else list(ids)
        replayed = []
        seen = set()
        for job_id in wanted:
            if job_id in seen or job_id not in body_of:
                continue
            seen.add(job_id)
            self.queue.send(job_id, body_of[job_id])
            self.dlq.remove(job_id)
            replayed.append(job_id)
        return replayed


OUTCOMES = ("success", "transient", "permanent")


class RetryQueue:
    def __init__(self, max_attempts):
        if type(max_attempts) is not int or max_attempts < 1:
            raise ValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
        self.max_attempts = max_attempts
        self.ready = []
        self.done = []
        self.quarantine = []

    def submit(self, job_id, payload):
        self.ready.append({"id": job_id, "payload": payload, "attempts": 0})

    def process(self, outcome):
        # tuple membership compares with ==, so unhashable outcomes are simply invalid
        if outcome not in OUTCOMES or type(outcome) is not str:
            raise ValueError(f"invalid outcome {outcome!r}")
        if not self.ready:
            return None
        job = self.ready.pop(0)
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
                del job["reason"]
                job["attempts"] = 0
                self.ready.append(job)
                return True
        return False

    def state(self):
        return copy.deepcopy(
            {"ready": self.ready, "done": self.done, "quarantine": self.quarantine}
        )
