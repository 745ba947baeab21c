# dlqspec_zygote.py: a warm start for the Python shim under `dlqspec grade` (docs/security.md, "The warm start").
"""dlqspec's Python zygote (Linux, Python 3.9+, standard library only).

`dlqspec grade` starts this once, as root, in a box of its own (network, IPC and mount
namespaces, every file read-only, a pids cgroup, a Landlock domain without TCP, few
capabilities, no_new_privs), with a SOCK_SEQPACKET socket on descriptor 3 that only grade
and its runs hold, and the environment a cold start gets. Its first message on the socket is
its set-up (what grade gave it of the environment, the uids a box may have). It imports what
the shim imports, compiles the shim, and then waits. For each submission a run makes the box
exactly as for a cold start (src/external/sandbox/): the cgroups, the minimal root, the user,
PID, mount, network, IPC, UTS and cgroup namespaces, process 1 of the PID namespace with its
fresh /proc. Process 1 then sends one request: a JSON text (the shim's argv, environment,
working folder, uid, limits, the system-call filter) and the box's descriptors: stdin,
stdout, stderr, protocol channel, a reply socket to process 1, the Landlock ruleset, the
cgroups' `cgroup.procs` (pids, memory, cpu), and the box's PID (for children), user, mount,
network, IPC, UTS and cgroup namespaces. The zygote forks (W) into the box's PID namespace
(process 2); W refuses any uid that is not a box's, joins the box's user namespace and
through it the others (its root is then the box's), and forks the implementation (D,
process 3), then ends, so that D is process 1's child, as a cold start's is. D joins the
cgroups, takes the box's uid with no group and no capability, enters the box's Landlock
domain, a fresh session keyring and the system-call filter before anything of the student is
read, and only then runs the shim, as `__main__`, on the solution. The zygote itself never
imports or runs student code; it only forks and reaps.
"""
import builtins  # noqa: F401  (what the shim imports, imported once here)
import ctypes
import fcntl
import importlib.util  # noqa: F401
import json
import os
import platform  # noqa: F401
import resource
import select
import signal
import socket
import struct
import sys
import threading  # noqa: F401
import time
import traceback  # noqa: F401
import types

CONTROL_FD = 3
MAX_REQUEST = 1 << 20
# stdin, stdout, stderr, channel, reply, ruleset, three cgroup.procs, and the box's namespaces.
FDS = 16
CHANNEL_FD = 3

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]

# x86-64 and aarch64 share the Landlock numbers; capset and keyctl differ.
_ARCH = os.uname().machine
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(_ARCH)
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(_ARCH)
KEYCTL_JOIN_SESSION_KEYRING = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SYS_LANDLOCK_RESTRICT_SELF = 446
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECUREBITS = 0x01 | 0x02 | 0x08 | 0x20 | 0x40 | 0x80  # as sandbox.rs drop_privileges
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x08000000, 0x20000000, 0x40000000
CLONE_NEWUSER, CLONE_NEWUTS, CLONE_NEWCGROUP = 0x10000000, 0x04000000, 0x02000000
# Where W puts each descriptor of a request (0 to 3 are the implementation's own).
REPLY, RULESET, CGROUPS = 4, 5, (6, 7, 8)
PID_NAMESPACE = 9  # of a request's descriptors, the box's PID namespace, which W is forked into
# The box's user namespace first: joining it gives W the rights to join the others.
NAMESPACES = (
    (10, CLONE_NEWUSER),
    (11, CLONE_NEWNS),
    (12, CLONE_NEWNET),
    (13, CLONE_NEWIPC),
    (14, CLONE_NEWUTS),
    (15, CLONE_NEWCGROUP),
)
# How long D waits to become process 1's child once W has forked it: a hang-guard only.
ADOPTION_SECONDS = 30


def _check(result, what):
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, "%s: %s" % (what, os.strerror(errno)))


def _die(why, what="the warm box could not be made", stderr=2):
    """A child that cannot box itself says why on its stderr (the run's) and ends, before any
    of the student's code was read: the run sees a process that did not start."""
    try:
        os.write(stderr, ("dlqspec zygote: %s: %s\n" % (what, why)).encode())
    finally:
        os._exit(121)


def _refused_uid(request, uids):
    """Why a request's uid is refused, or None: a warm child runs only as a uid dlqspec
    allocates for boxes, never as root, and never as whatever a request says."""
    low, high = uids
    uid = request.get("uid")
    if type(uid) is not int:
        return "it names no uid (a box that would keep uid 0)"
    if uid == 0 or not low <= uid < high:
        return "its uid %d is not one dlqspec allocates for boxes (%d to %d)" % (uid, low, high - 1)
    return None


def _mirror(status):
    """Ends this process as the one with wait status `status` ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _drop_privileges(uid):
    _libc.prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0)
    for capability in range(64):
        _libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    header = struct.pack("Ii", 0x20080522, 0)
    none = bytes(24)
    _check(_libc.syscall(SYS_CAPSET, header, none), "capset")


def _install_filter(program):
    """Installs the box's system-call filter (BPF instructions, 8 bytes each, as dlqspec made
    them), last, as a cold start's C does."""
    if not program:
        return
    if len(program) % 8:
        raise OSError("the system-call filter is not whole instructions")

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    instructions = ctypes.create_string_buffer(program, len(program))
    fprog = _Program(len(program) // 8, ctypes.cast(instructions, ctypes.c_void_p))
    _check(
        _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0),
        "PR_SET_SECCOMP",
    )


def _boxed_child(request, fds, shim_code):
    """W, the forked child: joins the box the run made and forks D into it, which boxes itself
    (as sandbox.rs's C does) and runs the shim."""
    # Each descriptor at its place; nothing else of the zygote's (its control socket, its
    # signal pipe) stays. Moved high first, so that no place overwrites one still to move.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64) for fd in fds]
    places = (0, 1, 2, CHANNEL_FD, REPLY, RULESET) + CGROUPS + (PID_NAMESPACE,) + tuple(
        fd for fd, _ in NAMESPACES
    )
    for target, fd in zip(places, high):
        os.dup2(fd, target, inheritable=False)
    _close_from(len(places))
    try:
        _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
        for which, soft, hard in request["rlimits"]:
            resource.setrlimit(which, (soft, hard))
        os.close(PID_NAMESPACE)
        for fd, kind in NAMESPACES:
            _check(_libc.setns(fd, kind), "setns")
            os.close(fd)
        w = os.getpid()  # W's pid in the box's PID namespace, which it was forked into
        d = os.fork()
    except Exception as error:  # noqa: BLE001 (any failure ends the child before the student)
        _die(error)
    if d > 0:
        # W ends at once: D is then process 1's child, as a cold C is B's (an orphan of the
        # namespace, which W is in, goes to its process 1).
        try:
            os.write(REPLY, b"S")
        finally:
            os._exit(0)
    # D: process 3 of the box's PID namespace.
    try:
        os.close(REPLY)
        for cgroup in CGROUPS:
            os.write(cgroup, b"0")
            os.close(cgroup)
        deadline = time.monotonic() + ADOPTION_SECONDS
        # Until W is not only gone but reaped by the zygote: its zombie is a process of the box
        # until then, which a cold start's box never shows.
        while os.getppid() != 1 or os.path.exists("/proc/%d" % w):
            if time.monotonic() > deadline:
                raise OSError("the box's process 1 never became this process's parent")
            os.sched_yield()
        _drop_privileges(request["uid"])
        # A uid change without exec leaves the process non-dumpable, and its /proc/self files
        # root's: exec makes a cold child dumpable again, so this one is made so too.
        _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
        _check(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, RULESET, 0), "landlock_restrict_self")
        os.close(RULESET)
        os.chdir(request["cwd"])
        if _libc.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
            raise OSError(ctypes.get_errno(), "joining a fresh session keyring")
        _install_filter(bytes.fromhex(request["filter"]))
        env = _wrapped(request["env"], request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        os.set_inheritable(0, True)
        os.set_inheritable(1, True)
        os.set_inheritable(2, True)
        os.set_inheritable(CHANNEL_FD, True)
        shim, solution = request["argv"]
        sys.path[0] = os.path.dirname(shim)
        if shim_code is None or shim_code.co_filename != shim:
            with open(shim, "rb") as source:
                shim_code = compile(source.read(), shim, "exec")
    except Exception as error:  # noqa: BLE001
        _die(error)
    # The shim runs as a cold `python3 dlqspec_shim.py solution.py` runs it: as __main__.
    sys.argv = [shim, solution]
    main = types.ModuleType("__main__")
    main.__file__ = shim
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    try:
        exec(shim_code, main.__dict__)
    except SystemExit as leaving:
        code = leaving.code
        os._exit(code if isinstance(code, int) else (0 if code is None else 1))
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(1)
    sys.stdout.flush()
    os._exit(0)


# What the interpreter's wrapper (pyenv's shim) added to or changed in the environment grade
# gave the zygote (PATH gets the version's bin folder first, PYENV_DIR is the folder it was
# started in): a cold start's wrapper does the same to its environment, in its own folder.
# Set from the set-up message (`_set_up`), not from a variable: the environment the zygote was
# started with is what every warm child's /proc/self/environ shows.
_GIVEN = {}
_STARTED_IN = os.getcwd()
_WRAPPED = {}


def _set_up(control):
    """Reads the set-up message: what grade gave of the environment, and the uids a box may
    have, as [first, past the last]."""
    global _GIVEN, _WRAPPED
    setup = json.loads(control.recv(MAX_REQUEST))
    _GIVEN = dict(setup["given"])
    _WRAPPED = {k: v for k, v in os.environ.items() if k != "DLQSPEC_TREE" and _GIVEN.get(k) != v}
    low, high = setup["uids"]
    return int(low), int(high)


def _wrapped(env, cwd):
    """`env` (a run's) as the wrapper would have made it: each variable it added or changed,
    unless the run gives that variable another value than grade gave the zygote."""
    env = dict(env)
    for name, value in _WRAPPED.items():
        if name not in env or env[name] == _GIVEN.get(name):
            env[name] = cwd if value == _STARTED_IN else value
    return env


def _precompiled_shim():
    shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dlqspec_shim.py")
    try:
        with open(shim, "rb") as source:
            return compile(source.read(), shim, "exec")
    except OSError:
        return None


def _receive(control, buffer):
    """One request: its length and descriptors; (0, []) when grade has closed the socket."""
    size = socket.CMSG_SPACE(FDS * 4)
    got, ancillary, flags, _ = control.recvmsg_into([buffer], size)
    fds = []
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(struct.unpack("%di" % (len(data) // 4), data[: len(data) - len(data) % 4]))
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or (got and len(fds) != FDS):
        for fd in fds:
            os.close(fd)
        return -1, []
    return got, fds


def _close_from(low):
    # close_range(2) where there is one (436 on x86-64 and aarch64), else one by one.
    if _libc.syscall(436, low, 0xFFFFFFFF, 0) != 0:
        os.closerange(low, 1 << 16)


def main():
    control = socket.socket(fileno=CONTROL_FD)
    if SYS_CAPSET is None:
        # No system call numbers for this machine: grade is told nothing is ready, and
        # starts every submission cold.
        sys.stderr.write("dlqspec zygote: no warm start on %s\n" % _ARCH)
        os._exit(1)
    uids = _set_up(control)
    shim_code = _precompiled_shim()
    buffer = bytearray(MAX_REQUEST)
    own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    # A child's end wakes the loop (SIGCHLD through the wakeup pipe).
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    control.send(b"R")
    while True:
        try:
            ready, _, _ = select.select([control, wake_read], [], [])
        except InterruptedError:
            ready = []
        if wake_read in ready:
            try:
                os.read(wake_read, 4096)
            except BlockingIOError:
                pass
        # Each W ends as soon as it has forked its implementation, which is the box's.
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if control not in ready:
            continue
        got, fds = _receive(control, buffer)
        if got == 0:
            os._exit(0)
        if got < 0:
            continue
        # W is forked into the box's PID namespace (so that the implementation it forks goes
        # to the box's process 1 when W ends), and the zygote's own children are in its own
        # again. The request is read by the child only: nothing of it is ever in the zygote's
        # heap, where a later child would find it, and its bytes are zeroed once the child has
        # them.
        if _libc.setns(fds[PID_NAMESPACE], CLONE_NEWPID) != 0:
            for fd in fds:
                os.close(fd)
            continue
        w = -1
        try:
            w = os.fork()
        finally:
            if w != 0:
                _check(_libc.setns(own_pid_namespace, CLONE_NEWPID), "setns to its own namespace")
        if w == 0:
            # Nothing of the zygote's loop reaches the child: no signal wakeup, no control
            # socket.
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            ready = None
            control.detach()
            try:
                request = json.loads(bytes(buffer[:got]))
            except ValueError as error:
                _die(error, stderr=fds[2])
            refused = _refused_uid(request, uids)
            if refused is not None:
                _die(refused + "; start it cold (grade --cold)", "request refused", fds[2])
            _boxed_child(request, fds, shim_code)
            os._exit(121)
        buffer[:got] = bytes(got)
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    main()
