# raced_modules.py (hostile): its folder `pkg/node_modules`, or `pkg` above it, is swapped for a
# link into the teacher's 0700 folder after dlqspec has copied the submission and before the box
# binds the packages (a process of the student's would do it with renameat2(RENAME_EXCHANGE)).
# Anything of the teacher's under `pkg/node_modules`: it says so by failing to load; its own
# package not shown there: the same.
import os

from honest import DLQConsumer, RetryQueue  # noqa: F401

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pkg", "node_modules")
seen = []
for folder, _, files in os.walk(here):
    for name in files:
        try:
            with open(os.path.join(folder, name)) as f:
                if "HIDDEN-" in f.read():
                    seen.append(os.path.join(folder, name))
        except OSError:
            pass
if seen:
    raise RuntimeError("the box bound what the link leads to: " + ", ".join(seen))
with open(os.path.join(here, "left-pad", "index.js")) as f:
    if "PACKAGE-OK" not in f.read():
        raise RuntimeError("the package is not shown in node_modules")
