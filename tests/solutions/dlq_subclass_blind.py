# breaks: dlq-consumer/permanent; mistake: tests `type(e) is PermanentError`, so a subclass of PermanentError is retried as if it were transient
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
        except Exception as e:  # anything else is transient; Crash (a BaseException) propagates
            # The mistake: only PermanentError itself is permanent, not a subclass of it.
            if type(e) is PermanentError:
                return self._dead_letter(msg, "permanent", e, msg["receive_count"])
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
