# breaks: dlq-consumer/entry-fields; mistake: failed_at is the message's first_received_at instead of clock.now()
from given import PermanentError, TransientError, Crash


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
        mid = msg["id"]
        if self.dlq.has(mid):
            self.queue.ack(mid)
            return "dead"
        rc = msg["receive_count"]
        if rc > self.max_attempts:
            return self._dead_letter(msg, "poison", None, rc - 1)
        try:
            self.handler(msg["body"])
        except PermanentError as e:
            return self._dead_letter(msg, "permanent", self._describe(e), rc)
        except Exception as e:
            if rc < self.max_attempts:
                self.queue.retry(mid)
                return "retry"
            return self._dead_letter(msg, "exhausted", self._describe(e), rc)
        self.queue.ack(mid)
        return "ok"

    def _describe(self, e):
        return f"{type(e).__name__}: {e}"

    def _dead_letter(self, msg, reason, error, attempts):
        entry = {
            "id": msg["id"],
            "body": msg["body"],
            "reason": reason,
            "error": error,
            "attempts": attempts,
            "first_attempt_at": msg["first_received_at"],
            "failed_at": msg["first_received_at"],
        }
        self.dlq.put(entry)
        self.queue.ack(msg["id"])
        return "dead"

    def replay(self, ids=None):
        entries = self.dlq.entries()
        bodies = {}
        order = []
        for e in entries:
            if e["id"] not in bodies:
                bodies[e["id"]] = e["body"]
                order.append(e["id"])
        if ids is None:
            ids = order
        replayed = []
        for i in ids:
            if i in bodies and i not in replayed:
                self.queue.send(i, bodies[i])
                self.dlq.remove(i)
                replayed.append(i)
        return replayed
