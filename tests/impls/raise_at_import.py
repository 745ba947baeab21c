# raise_at_import.py: a student solution that raises while being imported (line 9); the Python shim must answer hello with errored, file and line 9.
from given import PermanentError


def load_config():
    return {}


LIMIT = load_config()["max_attempts"]


class RetryQueue:
    pass
