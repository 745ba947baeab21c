# spawns_grandchildren.py: the Python reference solution, extended to start processes that would outlive it if nothing ended them: a sleeping child in a session of its own, and a sleeping grandchild orphaned by a double fork (setsid); their pids are appended to the file named by $DLQSPEC_TEST_PIDS.
import os
import subprocess

_example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python", "solution.py")
exec(compile(open(_example).read(), _example, "exec"))

_Reference = DLQConsumer  # noqa: F821 (defined by the reference solution above)
_started = []


def _record(pid):
    fd = os.open(os.environ["DLQSPEC_TEST_PIDS"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, b"%d\n" % pid)
    os.close(fd)


def _start_sleepers():
    if _started:
        return
    _started.append(True)
    child = subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _record(child.pid)
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:  # exits at once, leaving its own child an orphan
        grandchild = os.fork()
        if grandchild == 0:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execvp("sleep", ["sleep", "600"])
        os.write(write_end, b"%d" % grandchild)
        os._exit(0)
    os.close(write_end)
    grandchild = int(os.read(read_end, 32))
    os.close(read_end)
    os.waitpid(middle, 0)
    _record(grandchild)


class DLQConsumer(_Reference):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _start_sleepers()
