# syntax_error.py: a student solution that does not parse (line 6); the Python shim must answer hello with errored, file and line 6.
from given import PermanentError


class DLQConsumer:
    def process_one(self)
        return None
