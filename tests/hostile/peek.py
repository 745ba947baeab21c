# peek.py: looks for dlqspec in /proc (its argv, cwd, environment, every process's), and in
# its own environment, for the marker the test put in dlqspec's argv, cwd and environment.
# Found: it says so by failing to load. Not found: it is the honest solution.
import os

MARK = "@MARK@"
found = []
for key, value in os.environ.items():
    if MARK in key or MARK in value:
        found.append("own environment: " + key)
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for what in ("cmdline", "environ"):
        try:
            with open("/proc/%s/%s" % (pid, what), "rb") as f:
                if MARK.encode() in f.read():
                    found.append("/proc/%s/%s" % (pid, what))
        except OSError:
            pass
    try:
        if MARK in os.readlink("/proc/%s/cwd" % pid):
            found.append("/proc/%s/cwd" % pid)
    except OSError:
        pass
if found:
    raise RuntimeError("dlqspec seen: " + ", ".join(found))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
