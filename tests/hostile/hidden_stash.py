# hidden_stash.py (hostile): a perfect storage channel standing for every channel a box cannot
# close alone (the page cache, a timing): with the box off, each process appends every message
# it receives, with its pid, to a file beside the solution, and a visible spec fails quoting
# whatever a hidden one stashed before it. A hidden spec's data must never reach a visible
# result, and no process that served a visible spec may serve a hidden one.
import os

from honest import DLQConsumer as _Honest, RetryQueue  # noqa: F401

STASH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stash.log")


def _stashed():
    try:
        with open(STASH) as stash:
            return stash.read()
    except OSError:
        return ""


class _Spy:
    def __init__(self, queue):
        self._queue = queue

    def receive(self):
        msg = self._queue.receive()
        with open(STASH, "a") as stash:
            stash.write("%d %r\n" % (os.getpid(), msg))
        return msg

    def __getattr__(self, name):
        return getattr(self._queue, name)


class DLQConsumer(_Honest):
    def __init__(self, queue, *args):
        super().__init__(_Spy(queue), *args)

    def process_one(self):
        stashed = _stashed()
        if "SECRET" in stashed:
            raise RuntimeError("a hidden spec stashed: " + stashed)
        return super().process_one()
