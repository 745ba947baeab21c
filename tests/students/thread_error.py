# A student's DLQConsumer whose process_one does its work in a thread that raises, and receives nothing.
import threading


def work(queue):
    return queue.missing_method()


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue

    def process_one(self):
        worker = threading.Thread(target=work, args=(self.queue,), name="worker")
        worker.start()
        worker.join()
        return None

    def replay(self, ids=None):
        return []
