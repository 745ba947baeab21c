# hidden_echo.py (hostile): the example solution, with a consumer that writes every message it
# receives to its process's stderr (past the shim's capture), and whose process dies at its
# second consumer: a spec served by a process that served another one before ends errored, its
# stderr tail shown, and with it what an earlier spec (a hidden one) sent.
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "honest_solution",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python", "solution.py"),
)
_honest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_honest)

RetryQueue = _honest.RetryQueue
_consumers = 0


class _Spy:
    def __init__(self, queue):
        self._queue = queue

    def receive(self):
        msg = self._queue.receive()
        os.write(2, ("saw %r\n" % (msg,)).encode())
        return msg

    def __getattr__(self, name):
        return getattr(self._queue, name)


class DLQConsumer(_honest.DLQConsumer):
    def __init__(self, queue, *args):
        global _consumers
        _consumers += 1
        if _consumers > 1:
            os._exit(3)
        super().__init__(_Spy(queue), *args)
