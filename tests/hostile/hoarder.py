# hoarder.py: holds @BYTES@ bytes outside the memory and disk limits: in /dev/shm, in its
# private folder, and in shared-memory files (memfd), a new one whenever one is full. Any of it
# held: it says so by failing to load. Refused (or killed for memory): the limits held.
import os

MIB = 1 << 20
TOTAL = @BYTES@
CHUNK = b"x" * MIB


def fill(fd, wanted):
    written = 0
    try:
        while written < wanted:
            written += os.write(fd, CHUNK)
    except OSError:
        pass
    return written


done = []
for where in ("/dev/shm/@MARK@", os.path.join(os.environ.get("HOME", "/tmp"), "@MARK@")):
    try:
        fd = os.open(where, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        continue
    held = fill(fd, TOTAL)
    os.close(fd)
    if held >= TOTAL:
        done.append("wrote %d MiB to %s" % (held // MIB, where))
    try:
        os.unlink(where)
    except OSError:
        pass
held, files = 0, []
while held < TOTAL:
    try:
        fd = os.memfd_create("@MARK@")
    except (OSError, AttributeError):
        break
    files.append(fd)
    got = fill(fd, TOTAL - held)
    held += got
    if got == 0:
        break
if held >= TOTAL:
    done.append("held %d MiB in %d shared-memory files" % (held // MIB, len(files)))
if done:
    raise RuntimeError("hoarder: " + "; ".join(done))
for fd in files:
    os.close(fd)

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
