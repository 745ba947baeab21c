# swapped_report.py (hostile): implements nothing, and swaps the verdict instead. It reads its
# dlqspec's command line for `--output R`, and both a thread of its own and a detached process
# (a double fork, its pid appended to $DLQSPEC_TEST_PIDS) watch R's folder: every temporary
# file dlqspec makes beside R gets a forged results file renamed over it, and so does R itself
# once it is there, for as long as they live.
import os
import threading
import time

FORGED = '{"score": 86.0, "output": "forged", "tests": []}\n'


class DLQConsumer:
    def __init__(self, *args):
        pass


class RetryQueue:
    def __init__(self, *args):
        pass


def _record(pid):
    path = os.environ.get("DLQSPEC_TEST_PIDS")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, b"%d\n" % pid)
        os.close(fd)


def _run_output():
    try:
        parent = os.getppid()
        with open("/proc/%d/cmdline" % parent, "rb") as f:
            argv = f.read().split(b"\0")
        cwd = os.readlink("/proc/%d/cwd" % parent)
    except OSError:
        return None
    for i, word in enumerate(argv[:-1]):
        if word == b"--output":
            return os.path.join(cwd, os.fsdecode(argv[i + 1]))
    return None


def _forge(folder, over):
    mine = os.path.join(folder, ".forged-%d-%d" % (os.getpid(), threading.get_ident()))
    try:
        with open(mine, "w") as f:
            f.write(FORGED)
        os.rename(mine, over)
    except OSError:
        pass


def _swap(target, until):
    folder, base = os.path.split(target)
    prefix = "." + base + ".dlqspec-"
    while time.time() < until:
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        for name in names:
            if name.startswith(prefix) and name.endswith(".tmp"):
                _forge(folder, os.path.join(folder, name))
        try:
            with open(target) as f:
                current = f.read()
        except OSError:
            current = FORGED
        if current != FORGED:
            _forge(folder, target)
        time.sleep(0.001)


_target = _run_output()
if _target:
    threading.Thread(target=_swap, args=(_target, time.time() + 60), daemon=True).start()
    # The import waits until the detached watcher has recorded its pid, so the test's "it ran"
    # never depends on how soon the run could end it.
    _recorded, _told = os.pipe()
    _middle = os.fork()
    if _middle == 0:
        os.setsid()
        if os.fork() == 0:
            _record(os.getpid())
            os.write(_told, b"x")
            _swap(_target, time.time() + 60)
        os._exit(0)
    os.close(_told)
    os.read(_recorded, 1)
    os.close(_recorded)
    os.waitpid(_middle, 0)
