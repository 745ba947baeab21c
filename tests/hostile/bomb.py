# bomb.py: a fork bomb that stops itself at 1000 processes (so that a machine without the box
# survives this test): each child sleeps. Stopped by the box's process limit, it fails to
# load; all 1000 started, it is the honest solution.
import os

started = 0
try:
    while started < 1000:
        pid = os.fork()
        if pid == 0:
            try:
                os.execv("/bin/sleep", ["@MARK@", "60"])
            finally:
                os._exit(1)
        started += 1
except OSError as error:
    raise RuntimeError("fork failed after %d processes: %s" % (started, error))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
