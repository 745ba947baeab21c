# breaks capacity-validated: a capacity of 0 (or less) is accepted, making a buffer that refuses everything
class BoundedBuffer:
    def __init__(self, capacity):
        if type(capacity) is not int:
            raise ValueError("capacity must be an integer")
        self._capacity = capacity
        self._items = []

    def put(self, item):
        if len(self._items) >= self._capacity:
            return False
        self._items.append(item)
        return True

    def take(self):
        return self._items.pop(0) if self._items else None

    def state(self):
        return {"items": list(self._items), "capacity": self._capacity}
