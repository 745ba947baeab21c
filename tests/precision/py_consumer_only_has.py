# DLQConsumer only, Python: `except BaseException` that re-raises anything not an Exception (Crash included); replay uses dlq.has(id) per id, then one entries() read per id for the body; duplicates caught by re-checking has; reads the clock once per process_one up front and once more for failed_at.
import given


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.q = queue
        self.dlq = dlq
        self.handle = handler
        self.clock = clock
        self.limit = max_attempts

    def process_one(self):
        _t0 = self.clock.now()  # read for no particular reason
        m = self.q.receive()
        if m is None:
            return None
        if self.dlq.has(m["id"]):
            self.q.ack(m["id"])
            return "dead"
        n = m["receive_count"]
        if n > self.limit:
            return self._to_dlq(m, "poison", None, n - 1)
        try:
            self.handle(m["body"])
        except BaseException as e:
            if not isinstance(e, Exception):
                raise  # given.Crash (the process dying) and friends
            msg = "{}: {}".format(type(e).__name__, e)
            if isinstance(e, given.PermanentError):
                return self._to_dlq(m, "permanent", msg, n)
            if n < self.limit:
                self.q.retry(m["id"])
                return "retry"
            return self._to_dlq(m, "exhausted", msg, n)
        self.q.ack(m["id"])
        return "ok"

    def _to_dlq(self, m, reason, error, attempts):
        entry = {}
        entry["id"] = m["id"]
        entry["body"] = m["body"]
        entry["reason"] = reason
        entry["error"] = error
        entry["attempts"] = attempts
        entry["first_attempt_at"] = m["first_received_at"]
        entry["failed_at"] = self.clock.now()
        self.dlq.put(entry)
        self.q.ack(m["id"])
        return "dead"

    def replay(self, ids=None):
        if ids is None:
            ids = [e["id"] for e in self.dlq.entries()]
        out = []
        for i in ids:
            if not self.dlq.has(i):
                continue
            body = next(e["body"] for e in self.dlq.entries() if e["id"] == i)
            self.q.send(i, body)
            self.dlq.remove(i)
            out.append(i)
        return out
