# A student's DLQConsumer that prints far more than is kept, with terminal escapes, and receives nothing.
import sys


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue

    def process_one(self):
        print("\x1b[31mred\x1b[0m and a bell\x07")
        for i in range(20000):
            print("line %05d of chatter" % i)
        sys.stdout.buffer.write(b"bytes too\n")
        return None

    def replay(self, ids=None):
        return []
