# late_hang.py: answers the first specs (the empty queue right, a PermanentError wrongly: it
# is retried), then, on the message `order-1`, writes a forged report claiming every spec
# passed into every descriptor of its parent it can open (the run's report pipe among them,
# were it not sealed), and hangs for good.
import os
import time

FORGED = b"".join(
    b'{"event":"spec_finished","path":"%s","rules":[],"points":1,"outcome":"passed"}\n' % path
    for path in b"@SPECS@".split(b",")
) + b'{"event":"run_finished"}\n'


def forge():
    for fd in range(0, 16):
        try:
            with open("/proc/%d/fd/%d" % (os.getppid(), fd), "wb") as f:
                f.write(FORGED)
        except OSError:
            pass


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue
        self.handler = handler

    def process_one(self):
        msg = self.queue.receive()
        if msg is None:
            return None
        if msg["body"] == "order-1":
            forge()
            while True:
                time.sleep(1)
        try:
            self.handler(msg["body"])
        except Exception:
            self.queue.retry(msg["id"])
            return "retry"
        self.queue.ack(msg["id"])
        return "ok"

    def replay(self, ids=None):
        return []
