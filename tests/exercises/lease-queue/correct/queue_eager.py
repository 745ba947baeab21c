"""A correct lease queue in Python, written from docs/capstone.md alone: one list per state,
moved eagerly whenever the clock has passed a lease's end or a retry time."""

import bisect
from dataclasses import asdict, dataclass
from typing import Optional

from given import StaleLease


@dataclass
class Job:
    id: str
    account: str
    payload: str
    order: int
    attempts: int = 0
    worker: Optional[str] = None
    until: Optional[int] = None
    due: Optional[int] = None
    reason: Optional[str] = None


def _checked(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    return value


class LeaseQueue:
    def __init__(self, clock, effects, budget, lease, backoff):
        self.budget = _checked("budget", budget)
        self.lease = _checked("lease", lease)
        self.backoff = _checked("backoff", backoff)
        self.clock = clock
        self.effects = effects
        self.queued: list[Job] = []      # ready or held, by order
        self.waiting: list[Job] = []
        self.leased: list[Job] = []
        self.done: list[str] = []
        self.dead: list[Job] = []
        self.counter = 0

    @staticmethod
    def _insert(jobs, job):
        bisect.insort(jobs, job, key=lambda j: j.order)

    def _tick(self):
        now = self.clock.now()
        for job in [j for j in self.leased if now >= j.until]:
            self.leased.remove(job)
            job.worker = job.until = None
            if job.attempts >= self.budget:
                job.reason = "expired"
                self._insert(self.dead, job)
            else:
                self._insert(self.queued, job)
        for job in [j for j in self.waiting if now >= j.due]:
            self.waiting.remove(job)
            job.due = None
            self._insert(self.queued, job)

    def _blocked(self, job):
        return any(
            other.account == job.account and other.order < job.order
            for other in self.queued + self.waiting + self.leased
        )

    def submit(self, job_id, account, payload):
        self._tick()
        known = self.queued + self.waiting + self.leased + self.dead
        if job_id in self.done or any(j.id == job_id for j in known):
            return False
        self._insert(self.queued, Job(job_id, account, payload, self.counter))
        self.counter += 1
        return True

    def take(self, worker):
        self._tick()
        job = next((j for j in self.queued if not self._blocked(j)), None)
        if job is None:
            return None
        self.queued.remove(job)
        job.attempts += 1
        job.worker, job.until = worker, self.clock.now() + self.lease
        self._insert(self.leased, job)
        return job.id

    def finish(self, job_id, worker, outcome):
        if outcome not in ("success", "transient", "permanent") or not isinstance(outcome, str):
            raise ValueError(f"unknown outcome {outcome!r}")
        self._tick()
        job = next((j for j in self.leased if j.id == job_id), None)
        if job is None or job.worker != worker:
            raise StaleLease(f"{worker!r} has no running lease on {job_id!r}")
        self.leased.remove(job)
        job.worker = job.until = None
        if outcome == "success":
            self.done.append(job.id)
            self.effects.apply(job.account, job.payload)
            return "done"
        if outcome == "transient" and job.attempts < self.budget:
            job.due = self.clock.now() + self.backoff * (2 ** (job.attempts - 1))
            self._insert(self.waiting, job)
            return "retry"
        job.reason = "permanent" if outcome == "permanent" else "exhausted"
        self._insert(self.dead, job)
        return "dead"

    def replay(self, job_id):
        self._tick()
        job = next((j for j in self.dead if j.id == job_id), None)
        if job is None:
            return False
        self.dead.remove(job)
        job.reason, job.attempts, job.order = None, 0, self.counter
        self.counter += 1
        self._insert(self.queued, job)
        return True

    def state(self):
        self._tick()

        def entry(job, *extra):
            return {"id": job.id, "account": job.account, "payload": job.payload,
                    "attempts": job.attempts, **{k: getattr(job, k) for k in extra}}

        return {
            "ready": [entry(j) for j in self.queued if not self._blocked(j)],
            "held": [entry(j) for j in self.queued if self._blocked(j)],
            "waiting": [entry(j, "due") for j in self.waiting],
            "leased": [entry(j, "worker", "until") for j in self.leased],
            "done": list(self.done),
            "quarantine": [entry(j, "reason") for j in self.dead],
        }

    def policy(self):
        return {"budget": self.budget, "lease": self.lease, "backoff": self.backoff}

    def snapshot(self):
        self._tick()
        return {
            "policy": self.policy(),
            "counter": self.counter,
            "done": list(self.done),
            "queued": [asdict(j) for j in self.queued],
            "waiting": [asdict(j) for j in self.waiting],
            "leased": [asdict(j) for j in self.leased],
            "dead": [asdict(j) for j in self.dead],
        }

    @staticmethod
    def from_snapshot(snapshot, clock, effects):
        p = snapshot["policy"]
        queue = LeaseQueue(clock, effects, p["budget"], p["lease"], p["backoff"])
        queue.counter = snapshot["counter"]
        queue.done = list(snapshot["done"])
        for name in ("queued", "waiting", "leased", "dead"):
            setattr(queue, name, [Job(**j) for j in snapshot[name]])
        return queue
