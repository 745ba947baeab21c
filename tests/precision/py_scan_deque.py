# Both contracts, Python: dedupe by scanning dlq.entries(); reads queue.pending() and clock.now() (several times) for a log line; replay re-reads entries() once per id (duplicates fall out because the DLQ no longer has them); RetryQueue on collections.deque with __slots__ jobs, hand-built state() dicts, isinstance-not-bool validation.
import sys
from collections import deque

from given import Crash, PermanentError


def _log(*parts):
    print("[consumer]", *parts, file=sys.stderr)


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self._queue = queue
        self._dlq = dlq
        self._handler = handler
        self._clock = clock
        self._max = max_attempts

    def _in_dlq(self, msg_id):
        return any(entry["id"] == msg_id for entry in self._dlq.entries())

    def process_one(self):
        started = self._clock.now()
        msg = self._queue.receive()
        if msg is None:
            _log("nothing ready at", started, "pending:", self._queue.pending())
            return None
        mid = msg["id"]
        rc = msg["receive_count"]
        _log("got", mid, "delivery", rc, "at", self._clock.now(), "behind it:", self._queue.pending())
        if self._in_dlq(mid):
            self._queue.ack(mid)
            return "dead"
        if rc > self._max:
            return self._bury(msg, "poison", None, rc - 1)
        try:
            self._handler(msg["body"])
        except Crash:
            _log("crash while handling", mid)
            raise
        except PermanentError as exc:
            return self._bury(msg, "permanent", self._describe(exc), rc)
        except Exception as exc:
            if rc >= self._max:
                return self._bury(msg, "exhausted", self._describe(exc), rc)
            _log("retrying", mid, "at", self._clock.now())
            self._queue.retry(mid)
            return "retry"
        self._queue.ack(mid)
        _log("ok", mid, "at", self._clock.now())
        return "ok"

    @staticmethod
    def _describe(exc):
        return f"{type(exc).__name__}: {exc}"

    def _bury(self, msg, reason, error, attempts):
        now = self._clock.now()
        self._dlq.put(
            dict(
                id=msg["id"],
                body=msg["body"],
                reason=reason,
                error=error,
                attempts=attempts,
                first_attempt_at=msg["first_received_at"],
                failed_at=now,
            )
        )
        self._queue.ack(msg["id"])
        _log("dead-lettered", msg["id"], reason, "pending:", self._queue.pending())
        return "dead"

    def replay(self, ids=None):
        if ids is None:
            ids = [entry["id"] for entry in self._dlq.entries()]
        done = []
        for mid in ids:
            match = None
            for entry in self._dlq.entries():
                if entry["id"] == mid:
                    match = entry
                    break
            if match is None:
                continue  # unknown, or already replayed earlier in this call
            self._queue.send(mid, match["body"])
            self._dlq.remove(mid)
            done.append(mid)
        return done


class _Job:
    __slots__ = ("id", "payload", "attempts", "reason")

    def __init__(self, job_id, payload):
        self.id = job_id
        self.payload = payload
        self.attempts = 0
        self.reason = None


class RetryQueue:
    __slots__ = ("_max", "_ready", "_done", "_dead")

    _VALID = frozenset({"success", "transient", "permanent"})

    def __init__(self, max_attempts):
        if not isinstance(max_attempts, int) or isinstance(max_attempts, bool):
            raise ValueError("max_attempts must be an int")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._max = max_attempts
        self._ready = deque()
        self._done = []
        self._dead = []

    def submit(self, job_id, payload):
        self._ready.append(_Job(job_id, payload))

    def process(self, outcome):
        if not isinstance(outcome, str) or outcome not in self._VALID:
            raise ValueError("outcome must be 'success', 'transient' or 'permanent'")
        if len(self._ready) == 0:
            return None
        job = self._ready.popleft()
        job.attempts += 1
        if outcome == "success":
            self._done.append(job.id)
            return "done"
        if outcome == "transient" and job.attempts < self._max:
            self._ready.append(job)
            return "retry"
        job.reason = "permanent" if outcome == "permanent" else "exhausted"
        self._dead.append(job)
        return "dead"

    def replay(self, job_id):
        found = [j for j in self._dead if j.id == job_id]
        if not found:
            return False
        job = found[0]
        self._dead.remove(job)
        job.reason = None
        job.attempts = 0
        self._ready.append(job)
        return True

    def state(self):
        return {
            "ready": [{"id": j.id, "payload": j.payload, "attempts": j.attempts} for j in self._ready],
            "done": list(self._done),
            "quarantine": [
                {"id": j.id, "payload": j.payload, "attempts": j.attempts, "reason": j.reason}
                for j in self._dead
            ],
        }
