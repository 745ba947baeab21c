# breaks success-done: a success applies the payload under the job's id instead of its account, so no account's effects can be read in order
from given import StaleLease

OUTCOMES = ("success", "transient", "permanent")


def _whole(value, name):
    if type(value) is not int or value < 1:
        raise ValueError("%s must be an integer of at least 1, not %r" % (name, value))
    return value


class LeaseQueue:
    def __init__(self, clock, effects, budget, lease, backoff):
        self._clock = clock
        self._effects = effects
        self._max = _whole(budget, "budget")
        self._lease = _whole(lease, "lease")
        self._backoff = _whole(backoff, "backoff")
        # Every job not done, by id: its place in submission order (`seq`) and where it is.
        self._jobs = {}
        self._done = []
        self._next = 0

    # --- the time-driven moves, made whenever the queue is looked at -------------------------

    def _settle(self):
        now = self._clock.now()
        for job in sorted(self._jobs.values(), key=lambda j: j["seq"]):
            if job["where"] == "leased" and now >= job["until"]:
                del job["worker"], job["until"]
                if job["attempts"] >= self._max:
                    job["where"], job["reason"] = "quarantine", "expired"
                else:
                    job["where"] = "ready"
            elif job["where"] == "waiting" and now >= job["due"]:
                del job["due"]
                job["where"] = "ready"

    def _ordered(self, where):
        return sorted((j for j in self._jobs.values() if j["where"] == where), key=lambda j: j["seq"])

    def _held(self, job):
        """Whether an earlier job of its account is not finished yet."""
        return any(
            other["account"] == job["account"]
            and other["seq"] < job["seq"]
            and other["where"] in ("ready", "waiting", "leased")
            for other in self._jobs.values()
        )

    # --- the methods -----------------------------------------------------------------------

    def submit(self, job_id, account, payload):
        self._settle()
        if job_id in self._jobs or job_id in self._done:
            return False
        self._jobs[job_id] = {
            "id": job_id, "account": account, "payload": payload,
            "attempts": 0, "where": "ready", "seq": self._next,
        }
        self._next += 1
        return True

    def take(self, worker):
        self._settle()
        for job in self._ordered("ready"):
            if not self._held(job):
                job["attempts"] += 1
                job["where"], job["worker"] = "leased", worker
                job["until"] = self._clock.now() + self._lease
                return job["id"]
        return None

    def finish(self, job_id, worker, outcome):
        if not isinstance(outcome, str) or outcome not in OUTCOMES:
            raise ValueError("outcome must be success, transient or permanent, not %r" % (outcome,))
        self._settle()
        job = self._jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None or job["where"] != "leased" or job["worker"] != worker:
            raise StaleLease("%s holds no running lease on %s" % (worker, job_id))
        del job["worker"], job["until"]
        if outcome == "success":
            del self._jobs[job_id]
            self._done.append(job_id)
            self._effects.apply(job["id"], job["payload"])
            return "done"
        if outcome == "permanent":
            job["where"], job["reason"] = "quarantine", "permanent"
            return "dead"
        if job["attempts"] >= self._max:
            job["where"], job["reason"] = "quarantine", "exhausted"
            return "dead"
        job["where"] = "waiting"
        job["due"] = self._clock.now() + self._backoff * 2 ** (job["attempts"] - 1)
        return "retry"

    def replay(self, job_id):
        self._settle()
        job = self._jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None or job["where"] != "quarantine":
            return False
        del job["reason"]
        job["attempts"], job["where"], job["seq"] = 0, "ready", self._next
        self._next += 1
        return True

    # --- the views ---------------------------------------------------------------------------

    def state(self):
        self._settle()
        keys = {
            "ready": ("id", "account", "payload", "attempts"),
            "waiting": ("id", "account", "payload", "attempts", "due"),
            "leased": ("id", "account", "payload", "attempts", "worker", "until"),
            "quarantine": ("id", "account", "payload", "attempts", "reason"),
        }
        view = {"held": [], "leased": [], "waiting": [], "quarantine": [], "ready": []}
        for job in sorted(self._jobs.values(), key=lambda j: j["seq"]):
            where = job["where"]
            if where == "ready" and self._held(job):
                where = "held"
            view[where].append({k: job[k] for k in keys["ready" if where == "held" else where]})
        view["done"] = list(self._done)
        return view

    def policy(self):
        return {"budget": self._max, "lease": self._lease, "backoff": self._backoff}

    # --- restarts ------------------------------------------------------------------------------

    def snapshot(self):
        self._settle()
        return {
            "policy": self.policy(),
            "jobs": [dict(job) for job in sorted(self._jobs.values(), key=lambda j: j["seq"])],
            "done": list(self._done),
            "next": self._next,
        }

    @classmethod
    def from_snapshot(cls, snapshot, clock, effects):
        policy = snapshot["policy"]
        queue = cls(clock, effects, policy["budget"], policy["lease"], policy["backoff"])
        for job in snapshot["jobs"]:
            queue._jobs[job["id"]] = dict(job)
        queue._done = list(snapshot["done"])
        queue._next = snapshot["next"]
        return queue
