# neighbour.py: graded beside another submission (@OTHER@), both served warm by the same
# zygote: reads and writes the other's folder, and signals every process it can name that is
# not its own (the other submission, the zygote, dlqspec); then goes on as the honest solution.
import os
import signal

done = []
try:
    with open(os.path.join("@OTHER@", "solution.py")) as f:
        f.read(1)
    done.append("read the other submission")
except OSError:
    pass
try:
    with open(os.path.join("@OTHER@", "planted.txt"), "w") as f:
        f.write("x")
    done.append("wrote into the other submission")
except OSError:
    pass
mine = {os.getpid(), 1}
for pid in range(2, 4096):
    if pid in mine:
        continue
    try:
        os.kill(pid, 0)
    except OSError:
        continue
    try:
        os.kill(pid, signal.SIGSTOP)
        done.append("stopped pid %d" % pid)
    except OSError:
        done.append("sees pid %d" % pid)
try:
    os.kill(1, signal.SIGSTOP)
    os.kill(1, signal.SIGCONT)
except OSError:
    pass
if done:
    raise RuntimeError("the neighbour got through: " + "; ".join(done))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
