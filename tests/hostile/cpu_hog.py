# cpu_hog.py: starts @SPINNERS@ processes that spin for as long as the box lives, to take the
# CPU from every submission graded beside it (the kernel shares the CPU between processes,
# unless each box has a cpu cgroup of its own), so that a classmate's requests time out. It
# then waits @HOLD@ seconds (the test looks meanwhile at where its processes are counted, and
# ends it) and goes on as the honest solution.
import os
import time

for _ in range(@SPINNERS@):
    if os.fork() == 0:
        while True:
            pass
time.sleep(@HOLD@)

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
