# caller.py: connects to a loopback port the test listens on and sends what it could steal,
# then goes on as the honest solution.
import socket

try:
    with socket.create_connection(("127.0.0.1", @PORT@), timeout=2) as s:
        s.sendall(b"stolen")
except OSError:
    pass

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
