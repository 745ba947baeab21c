# metadata.py: learns of the teacher's files without reading them: a hidden spec's size by
# name (stat), and every spec file other runs open (inotify on the spec folder). Either done:
# it says so by failing to load.
import ctypes
import os

done = []
try:
    size = os.stat("@SPEC@").st_size
    done.append("the hidden spec is %d bytes" % size)
except OSError:
    pass
libc = ctypes.CDLL(None, use_errno=True)
watcher = libc.inotify_init1(0)
if watcher >= 0:
    IN_OPEN = 0x20
    if libc.inotify_add_watch(watcher, b"@SPECS@", IN_OPEN) >= 0:
        done.append("watches the spec folder")
    os.close(watcher)
if done:
    raise RuntimeError("metadata: " + "; ".join(done))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
