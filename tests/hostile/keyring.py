# keyring.py: reads a token the grader keeps in its session keyring, and leaves a note in the
# session and user keyrings for a later submission (or a later run of the same uid) to read.
# Any of it done: it says so by failing to load. None done: it is the honest solution.
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD_KEY, REQUEST_KEY, KEYCTL = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[os.uname().machine]
SESSION, USER = -3, -4
KEYCTL_SEARCH, KEYCTL_READ = 10, 11

done = []
for ring in (SESSION, USER):
    key = libc.syscall(KEYCTL, KEYCTL_SEARCH, ring, b"user", b"@MARK@-token", 0)
    if key >= 0:
        buffer = ctypes.create_string_buffer(256)
        got = libc.syscall(KEYCTL, KEYCTL_READ, key, buffer, 256)
        done.append("read the grader's token: %r" % buffer.raw[: max(got, 0)])
if libc.syscall(REQUEST_KEY, b"user", b"@MARK@-token", None, 0) >= 0:
    done.append("found the grader's token with request_key")
note = b"what a hidden spec showed"
for ring in (SESSION, USER):
    if libc.syscall(ADD_KEY, b"user", b"@MARK@-note", note, len(note), ring) >= 0:
        done.append("left a note in keyring %d" % ring)
if done:
    raise RuntimeError("keyring: " + "; ".join(done))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
