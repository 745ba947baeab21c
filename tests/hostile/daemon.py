# daemon.py: leaves behind a daemon (its own session, an empty environment) that waits for
# the run to end and then overwrites its report; then goes on as the honest solution.
import os

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve("/bin/sh", ["@MARK@", "-c", "sleep 3; echo overwritten > '@REPORT@'"], {})
    os._exit(0)
os.wait()

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
