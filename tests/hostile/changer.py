# changer.py: changes what it can see but does not own the writing of: makes a program of the
# interpreter's install setuid (4755), clears the interpreter's execute bits, touches and tags
# (xattr) the program, and opens up a spec and a classmate's folder. Any of it done: it says
# so by failing to load. None done: it is the honest solution.
import os

done = []
attempts = [
    ("made @PROGRAM@ setuid", lambda: os.chmod("@PROGRAM@", 0o4755)),
    ("cleared the interpreter's execute bits", lambda: os.chmod("@INTERPRETER@", 0o644)),
    ("touched @PROGRAM@", lambda: os.utime("@PROGRAM@", (0, 0))),
    ("tagged @PROGRAM@", lambda: os.setxattr("@PROGRAM@", "user.changer", b"1")),
    ("tagged its own file", lambda: os.setxattr(__file__, "user.changer", b"1")),
    ("made its own file world-writable", lambda: os.chmod(__file__, 0o777)),
    ("opened up the spec", lambda: os.chmod("@SPEC@", 0o777)),
    ("closed a classmate's folder", lambda: os.chmod("@OTHER@", 0)),
]
for what, attempt in attempts:
    try:
        attempt()
        done.append(what)
    except OSError:
        pass
if done:
    raise RuntimeError("changer: " + "; ".join(done))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
