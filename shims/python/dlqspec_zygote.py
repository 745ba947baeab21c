# dlqspec_zygote.py: a warm start for the Python shim under `dlqspec grade` (docs/security.md, "The warm start").
"""dlqspec's Python zygote (Linux, Python 3.9+, standard library only).

`dlqspec grade` starts this once, as root, in a PID, network and IPC namespace of its own,
with a SOCK_SEQPACKET socket on descriptor 3 that only grade and its runs hold, and the
environment a cold start gets. Its first message on the socket is its set-up (what grade gave
it of the environment, the uids a box may have). It imports what the shim imports, compiles
the shim, and then waits. For each submission a run sends
one request: a JSON text (the shim's argv, environment, working folder, uid, limits) and
the descriptors of that submission's box, prepared by dlqspec exactly as for a cold start:
its stdin, stdout, stderr, protocol channel, a reply socket, the Landlock ruleset and its
pids cgroup's `cgroup.procs`. The zygote forks; the child boxes itself as dlqspec's cold
start does (src/external/sandbox.rs: A, B, C) before anything of the student is read, and
only then runs the shim, as `__main__`, on the solution. The zygote itself never imports
or runs student code; it only forks, reaps, and tells each run how its child ended.
"""
import builtins  # noqa: F401  (what the shim imports, imported once here)
import ctypes
import importlib.util  # noqa: F401
import json
import os
import platform  # noqa: F401
import select
import signal
import socket
import struct
import sys
import threading  # noqa: F401
import traceback  # noqa: F401
import types

CONTROL_FD = 3
MAX_REQUEST = 1 << 20
FDS = 7  # stdin, stdout, stderr, channel, reply, ruleset, cgroup.procs
CHANNEL_FD = 3

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

# x86-64 and aarch64 share the Landlock numbers; capset differs.
_ARCH = os.uname().machine
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(_ARCH)
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECUREBITS = 0x01 | 0x02 | 0x08 | 0x20 | 0x40 | 0x80  # as sandbox.rs drop_privileges
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
O_PATH = 0o10000000


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


def _allow_fresh_proc(ruleset, access):
    fd = os.open("/proc", O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
    try:
        rule = struct.pack("=Qi", access, fd)
        _check(_libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, rule, 0), "landlock_add_rule on /proc")
    finally:
        os.close(fd)


def _boxed_child(request, fds, shim_code):
    """W: the forked child. Boxes itself (A, B, C of sandbox.rs) and runs the shim in C."""
    stdin, stdout, stderr, channel, _reply, ruleset, cgroup = fds
    # Only this submission's descriptors stay: the control socket and every other run's
    # reply socket are the zygote's, never a student's.
    for target, fd in ((0, stdin), (1, stdout), (2, stderr), (CHANNEL_FD, channel), (4, ruleset), (5, cgroup)):
        os.dup2(fd, target, inheritable=False)
    _close_from(6)
    ruleset, cgroup = 4, 5
    try:
        _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
        if os.getppid() != request["zygote"]:
            os._exit(121)
        import resource
        for which, soft, hard in request["rlimits"]:
            resource.setrlimit(which, (soft, hard))
        os.write(cgroup, b"0")
        os.close(cgroup)
        _check(_libc.unshare(request["namespaces"]), "unshare")
        read_end, write_end = os.pipe()
        b = os.fork()
    except Exception as error:  # noqa: BLE001 (any failure ends the child before the student)
        _die(error)
    if b > 0:
        # W: nothing of the submission's stays open here; it waits and mirrors C's status.
        os.closerange(0, read_end)
        _close_from(read_end + 1)
        status = 1 << 8
        while True:
            try:
                os.waitpid(b, 0)
                break
            except ChildProcessError:
                break
            except InterruptedError:
                continue
        sent = os.read(read_end, 4)
        if len(sent) == 4:
            status = struct.unpack("i", sent)[0]
        _mirror(status)
    # B: process 1 of the namespace.
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.close(read_end)
        _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
        _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
        _allow_fresh_proc(ruleset, request["proc_access"])
        c = os.fork()
    except Exception as error:  # noqa: BLE001
        _die(error)
    if c > 0:
        os.closerange(0, write_end)
        _close_from(write_end + 1)
        while True:
            try:
                reaped, status = os.waitpid(-1, 0)
            except InterruptedError:
                continue
            except ChildProcessError:
                os._exit(0)
            if reaped == c:
                os.write(write_end, struct.pack("i", status))
                # Process 1 leaving ends every process left in the namespace.
                os._exit(0)
    # C: drops every privilege, enters the Landlock domain, then runs the shim.
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.close(write_end)
        _drop_privileges(request["uid"])
        # A uid change without exec leaves the process non-dumpable, and its /proc/self files
        # root's: exec makes a cold child dumpable again, so this one is made so too.
        _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
        _check(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
        os.close(ruleset)
        os.chdir(request["cwd"])
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
    live = {}  # W's pid -> its run's reply socket
    me = os.getpid()
    # A child's end wakes the loop (SIGCHLD through the wakeup pipe).
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    control.send(b"R")
    while True:
        watched = [control, wake_read] + list(live.values())
        try:
            ready, _, _ = select.select(watched, [], [])
        except InterruptedError:
            ready = []
        for sock in ready:
            if sock is control:
                continue
            if sock == wake_read:
                try:
                    os.read(wake_read, 4096)
                except BlockingIOError:
                    pass
                continue
            # A reply socket that is readable is one whose run's relay is gone (killed): the
            # child goes with it.
            for pid, reply in list(live.items()):
                if reply is sock:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            reply = live.pop(pid, None)
            if reply is not None:
                try:
                    reply.send(struct.pack("i", status))
                except OSError:
                    pass
                reply.close()
        if control not in ready:
            continue
        got, fds = _receive(control, buffer)
        if got == 0:
            for pid in live:
                os.kill(pid, signal.SIGKILL)
            os._exit(0)
        if got < 0:
            continue
        # The request is read by the child only: nothing of it is ever in the zygote's heap,
        # where a later child would find it, and its bytes are zeroed once the child has them.
        w = os.fork()
        if w == 0:
            # Nothing of the zygote's loop reaches the child: no signal wakeup, no other run's
            # reply socket (closed here), no control socket.
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            watched = ready = sock = reply = None
            live.clear()
            control.detach()
            try:
                request = json.loads(bytes(buffer[:got]))
                request["zygote"] = me
            except ValueError as error:
                _die(error, stderr=fds[2])
            refused = _refused_uid(request, uids)
            if refused is not None:
                _die(refused + "; start it cold (grade --cold)", "request refused", fds[2])
            _boxed_child(request, fds, shim_code)
            os._exit(121)
        buffer[:got] = bytes(got)
        reply = socket.socket(fileno=fds[4])
        for i, fd in enumerate(fds):
            if i != 4:
                os.close(fd)
        live[w] = reply


if __name__ == "__main__":
    main()
