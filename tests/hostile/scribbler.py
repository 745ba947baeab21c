# scribbler.py: writes a raw escape sequence and a CI workflow command into every descriptor of
# its parent it can open through /proc (dlqspec's stdout and stderr among them), then goes on
# as the honest solution.
import os

RAW = b"\x1b[31m::error file=scribbler::@MARK@\n"
for fd in range(0, 16):
    try:
        with open("/proc/%d/fd/%d" % (os.getppid(), fd), "wb") as f:
            f.write(RAW)
    except OSError:
        pass

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
