# Both contracts, Python split over two files (imports py_split_helpers.py beside it): dedupe via dlq.has(id) called twice; replay sends every selected id first, then removes them all (batch); RetryQueue as dict + order list of dataclasses, state() via dataclasses.asdict.
from dataclasses import asdict

from given import PermanentError
from py_split_helpers import Job, check_max_attempts, check_outcome, error_text, make_entry


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue, self.dlq, self.handler, self.clock = queue, dlq, handler, clock
        self.max_attempts = max_attempts

    def process_one(self):
        message = self.queue.receive()
        if not message:
            return None
        mid = message["id"]
        already = self.dlq.has(mid)
        if already and self.dlq.has(mid):  # asked twice, on purpose: reads are free
            self.queue.ack(mid)
            return "dead"
        receive_count = message["receive_count"]
        if receive_count > self.max_attempts:
            return self._dead(make_entry(message, "poison", None, receive_count - 1, self.clock.now()))
        outcome, err = self._run(message["body"])
        if outcome == "ok":
            self.queue.ack(mid)
            return "ok"
        if outcome == "permanent":
            return self._dead(make_entry(message, "permanent", error_text(err), receive_count, self.clock.now()))
        if receive_count < self.max_attempts:
            self.queue.retry(mid)
            return "retry"
        return self._dead(make_entry(message, "exhausted", error_text(err), receive_count, self.clock.now()))

    def _run(self, body):
        try:
            self.handler(body)
        except PermanentError as e:
            return "permanent", e
        except Exception as e:  # Crash is a BaseException and flies past this
            return "transient", e
        return "ok", None

    def _dead(self, entry):
        self.dlq.put(entry)
        self.queue.ack(entry["id"])
        return "dead"

    def replay(self, ids=None):
        first_body = {}
        for entry in self.dlq.entries():
            first_body.setdefault(entry["id"], entry["body"])
        candidates = list(first_body) if ids is None else ids
        selected = []
        for mid in candidates:
            if mid in first_body and mid not in selected:
                selected.append(mid)
        # phase 1: every selected id is sent (in order) before anything leaves the DLQ
        for mid in selected:
            self.queue.send(mid, first_body[mid])
        # phase 2: now they can go
        for mid in selected:
            self.dlq.remove(mid)
        return selected


class RetryQueue:
    def __init__(self, max_attempts):
        self.max_attempts = check_max_attempts(max_attempts)
        self.jobs = {}
        self.ready_order = []
        self.done_order = []
        self.quarantine_order = []

    def submit(self, job_id, payload):
        self.jobs[job_id] = Job(job_id, payload)
        self.ready_order.append(job_id)

    def process(self, outcome):
        check_outcome(outcome)
        if not self.ready_order:
            return None
        job_id = self.ready_order.pop(0)
        job = self.jobs[job_id]
        job.attempts += 1
        if outcome == "success":
            self.done_order.append(job_id)
            return "done"
        if outcome == "permanent" or job.attempts >= self.max_attempts:
            job.reason = "permanent" if outcome == "permanent" else "exhausted"
            self.quarantine_order.append(job_id)
            return "dead"
        self.ready_order.append(job_id)
        return "retry"

    def replay(self, job_id):
        if job_id not in self.quarantine_order:
            return False
        self.quarantine_order.remove(job_id)
        job = self.jobs[job_id]
        job.reason = None
        job.attempts = 0
        self.ready_order.append(job_id)
        return True

    def state(self):
        ready = []
        for job_id in self.ready_order:
            view = asdict(self.jobs[job_id])
            del view["reason"]
            ready.append(view)
        return {
            "ready": ready,
            "done": [job_id for job_id in self.done_order],
            "quarantine": [asdict(self.jobs[job_id]) for job_id in self.quarantine_order],
        }
