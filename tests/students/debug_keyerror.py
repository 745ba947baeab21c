# A student's DLQConsumer that prints while it works, and whose helper raises KeyError when it dead-letters (it reads `first_received`, not `first_received_at`).
import sys

from given import PermanentError


def first_attempt(msg):
    return msg["first_received"]


class DLQConsumer:
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
        print("DEBUG got", msg["id"])
        if self.dlq.has(msg["id"]):
            self.queue.ack(msg["id"])
            return "dead"
        if msg["receive_count"] > self.max_attempts:
            return self._dead_letter(msg, "poison", None, msg["receive_count"] - 1)
        try:
            self.handler(msg["body"])
        except PermanentError as e:
            return self._dead_letter(msg, "permanent", e, msg["receive_count"])
        except Exception as e:
            if msg["receive_count"] < self.max_attempts:
                self.queue.retry(msg["id"])
                return "retry"
            return self._dead_letter(msg, "exhausted", e, msg["receive_count"])
        self.queue.ack(msg["id"])
        return "ok"

    def _dead_letter(self, msg, reason, error, attempts):
        sys.stderr.write("WARN dead-lettering %s\n" % msg["id"])
        entry = {
            "id": msg["id"],
            "body": msg["body"],
            "reason": reason,
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "attempts": attempts,
            "first_attempt_at": first_attempt(msg),
            "failed_at": self.clock.now(),
        }
        self.dlq.put(entry)
        self.queue.ack(msg["id"])
        return "dead"

    def replay(self, ids=None):
        return []
