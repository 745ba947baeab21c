# page_cache.py (hostile): probes and steers the host's page cache, which every box shares
# through the same read-only system files: a hidden spec's process evicts a file's pages
# (posix_fadvise DONTNEED) or loads them (readahead), and a later process reads the bits back
# without timing (preadv2 with RWF_NOWAIT fails on a page not cached; mincore and cachestat
# say which pages are). Any of it allowed: it says so by failing to load.
import ctypes
import mmap
import os

from honest import DLQConsumer, RetryQueue  # noqa: F401

PROBE = "/usr/share/zoneinfo/UTC" if os.path.exists("/usr/share/zoneinfo/UTC") else "/bin/sh"
libc = ctypes.CDLL(None, use_errno=True)
done = []

fd = os.open(PROBE, os.O_RDONLY)
try:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    done.append("posix_fadvise")
except OSError:
    pass
if libc.readahead(fd, ctypes.c_longlong(0), ctypes.c_size_t(4096)) == 0:
    done.append("readahead")
try:
    os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)
    done.append("preadv2 RWF_NOWAIT")
except BlockingIOError:
    # EAGAIN: the kernel answered whether the page is cached.
    done.append("preadv2 RWF_NOWAIT (EAGAIN)")
except OSError:
    pass
vec = ctypes.create_string_buffer(1)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
page = libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0)
if page not in (None, ctypes.c_void_p(-1).value):
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    if libc.mincore(page, 4096, vec) == 0:
        done.append("mincore")
cachestat = ctypes.create_string_buffer(64)
crange = (ctypes.c_uint64 * 2)(0, 0)
if libc.syscall(ctypes.c_long(451), fd, crange, cachestat, 0) == 0:
    done.append("cachestat")
os.close(fd)

if done:
    raise RuntimeError("the page cache answered: " + ", ".join(done))
