# breaks state-deep-copy: state() hands out the buffer's own list, so changing the view changes the buffer
class BoundedBuffer:
    def __init__(self, capacity):
        if type(capacity) is not int or capacity < 1:
            raise ValueError("capacity must be an integer of at least 1")
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
        return {"items": self._items, "capacity": self._capacity}
