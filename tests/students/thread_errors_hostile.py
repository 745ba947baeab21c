# A student's DLQConsumer whose threads end in exceptions that are hard to tell: one whose
# __str__ raises, one whose message is 100,000 characters long.
import threading


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


def unprintable():
    raise Unprintable()


def huge():
    raise ValueError("x" * 100_000)


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue

    def process_one(self):
        for target, name in ((unprintable, "first"), (huge, "second")):
            worker = threading.Thread(target=target, name=name)
            worker.start()
            worker.join()
        return None

    def replay(self, ids=None):
        return []
