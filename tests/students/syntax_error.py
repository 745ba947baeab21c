# A student's DLQConsumer with a syntax error on line 5 (a missing colon).
from given import PermanentError


class DLQConsumer
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue
