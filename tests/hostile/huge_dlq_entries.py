# huge_dlq_entries.py: a DLQConsumer whose every process_one() dead-letters ten 5 MiB entries, so that each spec's diff would be 50 MiB if dlqspec showed it whole.
from given import PermanentError  # noqa: F401 (the lesson's module, as a student imports it)

_BODY = "x" * (5 << 20)


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue, self.dlq = queue, dlq

    def process_one(self):
        msg = self.queue.receive()
        if msg is None:
            return None
        for n in range(10):
            self.dlq.put({"id": "%s-%d" % (msg["id"], n), "body": _BODY, "reason": "permanent",
                          "error": "PermanentError: flood", "attempts": 1,
                          "first_attempt_at": 0, "failed_at": 0})
        self.queue.ack(msg["id"])
        return "dead"

    def replay(self, ids=None):
        return []
