"""A correct bounded buffer in Python, on a deque, with its own names for everything."""
from collections import deque


class BoundedBuffer:
    def __init__(self, capacity):
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ValueError("bad capacity")
        self.limit = capacity
        self.queue = deque()

    def put(self, item):
        if len(self.queue) == self.limit:
            return False
        self.queue.append(item)
        return True

    def take(self):
        return self.queue.popleft() if self.queue else None

    def state(self):
        return {"capacity": self.limit, "items": [x for x in self.queue]}
