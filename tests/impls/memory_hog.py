# memory_hog.py: a dlqspec Python solution whose process_one asks for 4 GiB at once, past any sensible --memory limit (the shim answers with the MemoryError raised).
class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue

    def process_one(self):
        hoard = bytearray(4 << 30)
        return "ok" if hoard else None
