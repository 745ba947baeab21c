# raced.py (hostile): its folder `pkg` is swapped for a link to the teacher's 0700 spec folder
# while dlqspec copies the submission into the box (a process of the student's, watching the
# copy with inotify, would do it with renameat2(RENAME_EXCHANGE)). Anything of the teacher's
# in its copy: it says so by failing to load.
import os

from honest import DLQConsumer, RetryQueue  # noqa: F401

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pkg")
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
    raise RuntimeError("the copy followed the link: " + ", ".join(seen))
