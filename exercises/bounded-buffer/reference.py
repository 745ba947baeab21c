class BoundedBuffer:
    def __init__(self, capacity):
        if type(capacity) is not int or capacity < 1:
            raise ValueError("capacity must be an integer of at least 1, not %r" % (capacity,))
        self._capacity = capacity
        self._items = []

    def put(self, item):
        if len(self._items) >= self._capacity:
            return False
        self._items.append(item)
        return True

    def take(self):
        if not self._items:
            return None
        return self._items.pop(0)

    def state(self):
        return {"items": list(self._items), "capacity": self._capacity}
