# process_one.py: reaches into the box's process 1, a copy of dlqspec forked with everything
# the run holds in memory (the whole suite, hidden specs too): opens its /proc/1/mem, reads its
# environ, lists its descriptors (among them the pipe its status goes back on), and looks
# whether its /proc files are its own uid's (process 1 dumpable by the box's uid), where only
# Landlock or Yama would then keep its memory from it. Any of it: it says so by failing to
# load. None: it is the honest solution.
import os

done = []
for what in ("mem", "environ"):
    try:
        with open("/proc/1/" + what, "rb") as f:
            f.read(1)
        done.append("opened /proc/1/" + what)
    except OSError:
        pass
try:
    done.append("listed /proc/1/fd: %s" % os.listdir("/proc/1/fd"))
except OSError:
    pass
try:
    with open("/proc/sys/kernel/overflowuid") as f:
        overflow = int(f.read())
except (OSError, ValueError):
    overflow = 65534
# A process that is not dumpable has its /proc files root's (but its world-readable folder,
# which shows its uid), which the box's user namespace does not map (the overflow uid): where
# the box's own uid is that one, nothing can be told.
if os.getuid() != overflow and os.stat("/proc/1/mem").st_uid == os.getuid():
    done.append("process 1 is dumpable by uid %d" % os.getuid())
if done:
    raise RuntimeError("process 1: " + "; ".join(done))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
