# vm_socket.py: opens a socket of every address family no network namespace holds: a VM socket
# (AF_VSOCK), which reaches the hypervisor's own services from a virtual machine or a CI runner
# (Firecracker, Hyper-V, KubeVirt), the kernel's crypto sockets (AF_ALG), and every other family
# but IPv4, IPv6 and netlink (a Unix socket has its own attack, socket_file.py). A family the
# kernel lacks proves nothing; one it opens: it says so by failing to load. None: it is the
# honest solution.
import errno
import socket

KEPT = {socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_UNIX}
KINDS = (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET, socket.SOCK_RAW)
opened = []
refused = set()
for family in range(1, 64):
    if family in KEPT:
        continue
    for kind in KINDS:
        try:
            socket.socket(family, kind).close()
        except OSError as error:
            if error.errno == errno.EPERM:
                refused.add(family)
            continue
        opened.append("family %d, type %d" % (family, kind))
if opened:
    raise RuntimeError("opened sockets no network namespace holds: " + ", ".join(opened))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
