# socket_file.py: connects to a Unix socket file outside its folder (the test's, 0666; on a CI
# runner it could be docker.sock) and sends what it could steal. Connected: it fails to load.
import socket

try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect("@SOCKET@")
        s.sendall(b"stolen")
    raise RuntimeError("socket_file: connected to @SOCKET@")
except OSError:
    pass

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
