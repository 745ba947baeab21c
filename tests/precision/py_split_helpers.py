# Helper module for py_split.py (not a solution by itself): entry building, error text, validation and the Job dataclass.
from dataclasses import dataclass, field
from typing import Optional

VALID_OUTCOMES = {"success": "done", "transient": "retry", "permanent": "dead"}


def error_text(exc):
    return f"{type(exc).__name__}: {exc}"


def make_entry(message, reason, error, attempts, failed_at):
    return {
        "id": message["id"],
        "body": message["body"],
        "reason": reason,
        "error": error,
        "attempts": attempts,
        "first_attempt_at": message["first_received_at"],
        "failed_at": failed_at,
    }


def check_max_attempts(value):
    # bool is a subclass of int, and a float such as 2.0 is not an integer here
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("max_attempts must be an integer")
    if value < 1:
        raise ValueError("max_attempts must be >= 1")
    return value


def check_outcome(value):
    if type(value) is not str or value not in VALID_OUTCOMES:
        raise ValueError(f"unknown outcome: {value!r}")
    return value


@dataclass
class Job:
    id: str
    payload: str
    attempts: int = 0
    reason: Optional[str] = field(default=None)
