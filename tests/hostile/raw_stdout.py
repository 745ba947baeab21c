# raw_stdout.py: the Python reference solution, with writes to fd 1 below print and sys.stdout: os.write(1, ...) at load and in each call, and a child process that inherits fd 1.
import os
import subprocess
import sys

# The test copies the example solution beside this file as reference.py: in the box, a
# solution reads only its own folder.
_example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference.py")
exec(compile(open(_example).read(), _example, "exec"))

_Reference = DLQConsumer  # noqa: F821 (defined by the reference solution above)

os.write(1, b"raw write while loading\n")


class DLQConsumer(_Reference):
    def __init__(self, *args):
        super().__init__(*args)
        subprocess.run([sys.executable, "-c", "print('a child that inherits fd 1')"], check=True)

    def process_one(self):
        os.write(1, b"raw write in process_one\n")
        print("print in process_one")
        return super().process_one()
