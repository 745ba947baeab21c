# vandal.py: reads a hidden spec, overwrites the teacher's spec, plants files in grade's output
# folder and in another submission's folder. Any of it done: it says so by failing to load.
# None done: it is the honest solution.
import os

done = []
try:
    with open("@SPEC@") as f:
        f.read()
    done.append("read the spec")
except OSError:
    pass
for path in ("@SPEC@", "@OUTPUT@/bob.jsonl", "@OUTPUT@/summary.json", "@OTHER@/solution.py"):
    try:
        with open(path, "a") as f:
            f.write("\n# vandal was here\n")
        done.append("wrote " + path)
    except OSError:
        pass
for folder in ("@OUTPUT@", "@OTHER@", os.path.dirname("@SPEC@")):
    try:
        with open(os.path.join(folder, "planted.txt"), "w") as f:
            f.write("planted")
        done.append("planted in " + folder)
    except OSError:
        pass
if done:
    raise RuntimeError("vandal: " + "; ".join(done))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
