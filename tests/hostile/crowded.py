# crowded.py: starts @COUNT@ processes, well within --processes, while other processes of its
# uid run outside the box (the test's, standing for a classmate's box under an ordinary user's
# `grade`, or the user's own programs). A fork refused: the box counted processes that are
# not its own against its limit, so a classmate could starve it: it says so by failing to
# load. All started: it is the honest solution.
import os

wake, hold = os.pipe()
children = []
refused = None
for started in range(@COUNT@):
    try:
        pid = os.fork()
    except OSError as error:
        refused = "fork %d of @COUNT@ refused: %s" % (started + 1, error)
        break
    if pid == 0:
        os.close(hold)
        os.read(wake, 1)
        os._exit(0)
    children.append(pid)
os.close(hold)
for pid in children:
    os.waitpid(pid, 0)
if refused:
    raise RuntimeError("processes outside the box counted against it: " + refused)

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
