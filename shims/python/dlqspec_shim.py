# dlqspec_shim.py: runs a student's solution.py under dlqspec's JSON-lines protocol v1 (usage: python3 dlqspec_shim.py solution.py).
"""dlqspec Python shim (Python 3.9+, standard library only).

dlqspec writes one JSON request per line on the protocol channel (the fd
DLQSPEC_PROTOCOL_FD names; fd 1 stays the student's); we answer one JSON line
per request there. While the student's code runs, the proxies in the `given`
module turn each call of a given part into a "world" message and block until
dlqspec answers it. docs/protocol.md describes the messages.

The shim knows no contract by name: dlqspec's hello describes each one (its
class, its given parts, its errors), and the `given` module is built from that.
"""
import builtins
import importlib.util
import json
import os
import sys
import threading
import types

# traceback and platform are not imported here: each costs about a millisecond of every start,
# and a run needs traceback only when an error is raised, platform never (see _python_version).

PROTOCOL = 1
FEATURES = ["foresight"]

# --- the protocol channel ------------------------------------------------
# Student code may print(), write to sys.__stdout__ or even os.write(1, ...).
# None of that may reach the protocol stream. dlqspec offers a channel of its own
# (DLQSPEC_PROTOCOL_FD, fd 3): the shim speaks there, and fd 1 stays the
# student's, read by dlqspec as the spec's output. Without the offer (an older
# dlqspec, shims/tests/run.py) stdout is the protocol: it moves to a private
# descriptor and fd 1 becomes stderr. Likewise stdin: an input() in the solution
# must not swallow a protocol line.
def _offered_channel():
    try:
        fd = int(os.environ.pop("DLQSPEC_PROTOCOL_FD", ""))
        if fd <= 2:
            return None
        os.set_inheritable(fd, False)  # the student's child processes must not write on it
    except (ValueError, OSError):
        return None
    return fd


_out_fd = _offered_channel()
_on_channel = _out_fd is not None
if not _on_channel:
    _out_fd = os.dup(1)
    os.dup2(2, 1)
_in = os.fdopen(os.dup(0), "rb")
_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)
sys.dont_write_bytecode = True  # leave no __pycache__ in the student's folder

# --- captured output -------------------------------------------------------
# print() and writes to sys.stdout/sys.stderr are kept per stream and sent to dlqspec as
# `output` messages before each world call and reply, so each spec gets what it printed.
# Each buffer is bounded: beyond _CAP bytes only the count of what was dropped is kept.
# Writes below Python (os.write, C extensions, child processes) reach fd 1, which dlqspec
# reads as the spec's stdout on the channel (fd 2 otherwise), and fd 2.
_CAP = 64 * 1024


class _Capture:
    encoding = "utf-8"
    errors = "replace"

    def __init__(self, name):
        self.name = name
        self.parts = []
        self.size = 0
        self.cut = 0

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        n = len(text.encode("utf-8", "replace"))
        # Once something is cut, so is all that follows: what is kept is a prefix of the output.
        if not self.cut and self.size + n <= _CAP:
            self.parts.append(text)
            self.size += n
        else:
            self.cut += n
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        # Below Python, stdout is fd 1 when the protocol is on the channel; else both are fd 2.
        return 1 if self.name == "stdout" and _on_channel else 2

    @property
    def buffer(self):
        return _Bytes(self)

    def readable(self):
        return False

    def writable(self):
        return True

    def take(self):
        text, cut = "".join(self.parts), self.cut
        self.parts, self.size, self.cut = [], 0, 0
        return text, cut


class _Bytes:
    """sys.stdout.buffer: bytes written are decoded into the capture."""

    def __init__(self, capture):
        self.capture = capture

    def write(self, data):
        self.capture.write(bytes(data).decode("utf-8", "replace"))
        return len(data)

    def flush(self):
        pass


_captures = (_Capture("stdout"), _Capture("stderr"))
sys.stdout, sys.stderr = _captures
_real_stderr = sys.__stderr__


# One encoder for the whole run: json.dumps with any option builds a new one per call.
# allow_nan=False: NaN/Infinity are not JSON, yet json.dumps would write them.
_encode = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode


def _write_line(text):
    # Unbuffered: one os.write per line, so every reply leaves at once (the peer is waiting on it).
    data = (text + "\n").encode()
    try:
        written = os.write(_out_fd, data)
        if written < len(data):  # a pipe takes a short line whole; a long one may go in parts
            rest = memoryview(data)[written:]
            while rest:
                rest = rest[os.write(_out_fd, rest):]
    except BrokenPipeError:
        _exit(0)  # dlqspec is gone (as with EOF); don't let the solution catch this as its own error


def _send(msg):
    _write_line(_encode(msg))


def _flush_output(seq):
    """Sends what was printed since the last flush, one `output` message per stream."""
    for capture in _captures:
        if not (capture.parts or capture.cut):
            continue  # the usual case, once per world call: nothing printed, nothing to take
        text, cut = capture.take()
        if text or cut:
            _write_line(_encode({"seq": seq, "type": "output", "stream": capture.name, "text": text, "cut": cut}))


def _die(why):
    """dlqspec broke the protocol: nothing sensible can be replied, so say why and stop."""
    _real_stderr.write("dlqspec_shim: protocol error: %s\n" % why)
    _real_stderr.flush()
    os._exit(2)


# json.loads on bytes first guesses their encoding and builds a decoder's state per call,
# several times the cost of reading the line; the scanner reads one JSON value from a str.
_scan = json.JSONDecoder().scan_once


def _loads(line):
    """json.loads(line) for a line of dlqspec's: read by the scanner when the line is one JSON
    value and its newline, else by json.loads itself, which decides what any other line is."""
    try:
        text = line.decode("utf-8", "surrogatepass")
        value, end = _scan(text, 0)
        if not text[end:].strip(" \t\n\r"):  # what json.loads allows after the value
            return value
    except Exception:
        pass
    return json.loads(line)


def _read():
    """The next message from dlqspec, or None at EOF."""
    while True:
        line = _in.readline()
        if not line:
            return None
        if line.strip():
            try:
                msg = _loads(line)
            except ValueError:
                _die("not JSON: %r" % line[:200])
            if not isinstance(msg, dict):
                _die("not a JSON object: %r" % line[:200])
            return msg


def _exit(status):
    # os._exit: a thread or atexit hook left by the solution must not keep us alive.
    _real_stderr.flush()
    os._exit(status)


# --- world calls ---------------------------------------------------------
_seq = None  # seq of the request being served; world calls are legal only inside one
_n = 0       # world calls made so far while serving it
_world_head = None  # '{"seq":SEQ,"type":"world","n":' for that seq, when it encodes
_call_json = {}  # the JSON of each world call's name, encoded once
_foresee = None  # the request's foreseen world calls, while every call so far took its answer


def _serve(seq, foresee=None):
    """Marks request `seq` as the one being served (None: none is), with its foreseen calls."""
    global _seq, _n, _world_head, _foresee
    _seq, _n = seq, 0
    _foresee = foresee if type(foresee) is list and foresee else None
    try:
        if seq is None:
            _world_head = None
        else:  # dlqspec's seq is an int, which %d writes as _encode would, only faster
            _world_head = '{"seq":%s,"type":"world","n":' % ("%d" % seq if type(seq) is int else _encode(seq))
    except (TypeError, ValueError):
        _world_head = None  # a seq that is not JSON: _world says so as it always did


def _world_line(call, args):
    """The world message of call number _n + 1: what _encode makes of its dict, in the order
    of its keys, put together from parts encoded once per request, call name and shim run."""
    if _world_head is None:
        return _encode({"seq": _seq, "type": "world", "n": _n + 1, "call": call, "args": list(args)})
    name = _call_json.get(call)
    if name is None:
        name = _call_json[call] = _encode(call)
    return "%s%d,\"call\":%s,\"args\":%s}" % (_world_head, _n + 1, name, _encode(list(args)) if args else "[]")


# The canonical JSON of a value: keys sorted, so that arguments equal as JSON compare equal as
# text (1 and 1.0 differ, as do true and 1; key order does not count).
_canon = json.JSONEncoder(allow_nan=False, sort_keys=True, separators=(",", ":")).encode


def _foreseen(call, args):
    """The foreseen answer of this call, the _n-th of the request, if it is the call foreseen."""
    global _foresee
    at = _n - 1
    f = _foresee[at] if at < len(_foresee) else None
    if type(f) is dict and f.get("call") == call:
        try:
            if _canon(list(args)) == _canon(f.get("args")):
                return f
        except (TypeError, ValueError):
            pass
    _foresee = None  # the solution went its own way: every later call of the request waits
    return None


def _world(call, *args):
    global _n
    if _seq is None:
        raise RuntimeError("%s() called outside a dlqspec request (e.g. at import time)" % call)
    # Encode before counting, so a body that is not JSON leaves no gap in n.
    line = _world_line(call, args)
    _n += 1
    _flush_output(_seq)
    f = _foreseen(call, args) if _foresee is not None else None
    if f is not None:
        # dlqspec answers nothing: it performs the call when it reads it, in order.
        _write_line(line[:-1] + ',"foreseen":true}')
        if "raise" in f:
            raise _error_from_wire(f.get("raise") or {})
        return f.get("value")
    _write_line(line)
    reply = _read()
    if reply is None:
        _exit(0)  # dlqspec hung up mid-call: it has given up on this run
    if reply.get("seq") != _seq or reply.get("n") != _n or reply.get("type") not in ("result", "raise"):
        _die("expected result/raise for seq %s n %s, got %.200r" % (_seq, _n, reply))
    if reply["type"] == "result":
        return reply.get("value")
    raise _error_from_wire(reply.get("error") or {})


# --- the `given` module ----------------------------------------------------
# Every contract is described in hello (`exercises`): its class, its given parts and its
# errors. The shim knows none by name: before the solution loads, it adds each contract's
# errors and given part classes to the `given` module, which is in sys.modules so that
# `from given import ...` gets them even when the student keeps a given.py of their own
# beside the solution (the shim must recognise the errors it raises); and it makes the given
# parts a `new` asks for from the description.
given = types.ModuleType("given", "The given parts and errors of dlqspec's contracts, answered by its world.")
sys.modules["given"] = given


class _UndeclaredCrash(BaseException):
    """The base of a crash the world raises under a name no contract declares: ordinary
    handlers (`except Exception`) do not catch it."""


_GIVEN_ERRORS = {}  # name -> class: every contract's errors, raised by name
_SUBCLASSABLE = {}  # what a world raise's `extends` may name
_CRASHES = (_UndeclaredCrash,)  # the error classes a solution must not catch: raised as kind "crash"
_CONTRACTS = {}  # name -> {"class", "given", "errors"}, from hello
_serving = None  # the contract of the current instance, whose crash an unknown crash extends
_made = {}  # classes made up for names Python lacks, one per name so `except` matches across calls


def _part_class(cls_name, part, methods):
    """A given part's class: each method a world call `PART.METHOD`."""
    def method(m):
        def call(self, *args):
            return _world("%s.%s" % (self._dlqspec_part, m), *args)
        call.__name__ = m
        return call
    body = {m: method(m) for m in methods if isinstance(m, str) and m.isidentifier()}
    body["__init__"] = lambda self, *args, **kwargs: None  # a part made by the solution's own tests
    body["_dlqspec_part"] = part
    cls = type(str(cls_name), (object,), body)
    cls.__module__ = "given"
    return cls


def _learn_contracts(contracts):
    """Adds what hello describes to the given module: each contract's errors and part classes."""
    global _CRASHES
    if not isinstance(contracts, dict):
        return
    for name, described in contracts.items():
        if not isinstance(described, dict) or not isinstance(described.get("class"), str):
            continue
        _CONTRACTS[name] = described
        for cls_name, error in (described.get("errors") or {}).items():
            if not isinstance(cls_name, str) or not cls_name.isidentifier() or cls_name in _GIVEN_ERRORS:
                continue
            crash = isinstance(error, dict) and error.get("base") == "crash"
            cls = type(cls_name, (BaseException if crash else Exception,), {"__module__": "given"})
            _GIVEN_ERRORS[cls_name] = _SUBCLASSABLE[cls_name] = cls
            setattr(given, cls_name, cls)
            if crash:
                _CRASHES = _CRASHES + (cls,)
        for part, described_part in (described.get("given") or {}).items():
            if not isinstance(described_part, dict) or described_part.get("callable"):
                continue
            cls_name = described_part.get("class")
            if isinstance(cls_name, str) and cls_name.isidentifier() and not hasattr(given, cls_name):
                setattr(given, cls_name, _part_class(cls_name, part, described_part.get("methods") or []))


def _given_part(contract, part):
    """The given part `part` of `contract`, as the constructor is handed it."""
    described = ((_CONTRACTS.get(contract) or {}).get("given") or {}).get(part)
    if not isinstance(described, dict):
        raise _ShimError("the contract %r has no given part %r" % (contract, part))
    if described.get("callable"):
        def call(*args):
            return _world(part, *args)
        call.__name__ = str(part)
        return call
    cls_name = described.get("class")
    cls = getattr(given, cls_name, None) if isinstance(cls_name, str) else None
    if cls is None or getattr(cls, "_dlqspec_part", None) != part:
        cls = _part_class(cls_name if isinstance(cls_name, str) and cls_name.isidentifier() else part,
                          part, described.get("methods") or [])
    return cls()


def _class_of(solution, cls_name):
    cls = getattr(solution, cls_name, None) if isinstance(cls_name, str) else None
    return cls if callable(cls) else None


def _plain(cls):
    """A subclass of builtin `cls`, of the same name, whose str() is the message as given.

    The handler raises "KeyError with message m", and a student writes f"{type(e).__name__}: {e}"
    as the lesson says; but str(KeyError(m)) is repr(m), quoted. Specs are language-neutral, so
    the exception must print its message as the spec writes it, whatever class it is.
    """
    key = (cls.__name__, "plain")
    if key not in _made:
        _made[key] = type(cls.__name__, (cls,), {
            "__module__": cls.__module__,
            "__str__": lambda self: str(self.args[0]) if self.args else "",
        })
    return _made[key]


def _crash_base():
    """The class an unknown crash extends: the crash error the served contract declares, so
    that it is one, else the shim's own."""
    errors = (_CONTRACTS.get(_serving) or {}).get("errors") or {}
    for name, error in errors.items():
        if isinstance(error, dict) and error.get("base") == "crash" and name in _GIVEN_ERRORS:
            return _GIVEN_ERRORS[name]
    return _UndeclaredCrash


def _error_from_wire(err):
    """The exception a world `raise` stands for: given's, a builtin of that name, or a made-up
    class; with `extends`, a subclass of that name of the given error it names."""
    name = str(err.get("class") or "Exception")
    message = str(err.get("message", ""))
    base = _SUBCLASSABLE.get(err.get("extends")) if isinstance(err.get("extends"), str) else None
    if base is not None:
        # A real subclass, so `except BASE` catches it and type(e).__name__ names it.
        key = (name, base)
        if key not in _made:
            _made[key] = type(name, (base,), {"__module__": "given"})
        return _made[key](message)
    cls = _GIVEN_ERRORS.get(name) or getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        try:
            e = cls(message)
            return e if str(e) == message else _plain(cls)(message)
        except Exception:
            pass  # builtins such as UnicodeDecodeError want other arguments: use a made-up class
    base = _crash_base() if err.get("kind") == "crash" else Exception  # an unknown crash still crashes
    key = (name, base)
    if key not in _made:
        _made[key] = type(name, (base,), {"__module__": "given"})
    return _made[key](message)


# --- loading the solution --------------------------------------------------
def _load(path):
    """Import the solution; return (module, None) or (None, errored-fields)."""
    sys.path[0] = os.path.dirname(path)  # the student's own helper modules import as if run directly
    try:
        # A fixed module name: the file's own stem could shadow a stdlib module (queue.py...).
        spec = importlib.util.spec_from_file_location("dlqspec_solution", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and friends look their module up here
        spec.loader.exec_module(module)
        return module, None
    except BaseException as e:  # SystemExit at import is a load error too
        import traceback
        # Only what concerns the student: their frames (none of the shim's or importlib's),
        # and for a syntax error the line with its caret.
        own = [f for f in traceback.extract_tb(e.__traceback__) if _students(f.filename)]
        details = "".join(traceback.format_exception_only(type(e), e))
        if own and not isinstance(e, SyntaxError):
            details = "Traceback (most recent call last):\n" + "".join(traceback.format_list(own)) + details
        if isinstance(e, SyntaxError):
            where = {"file": os.path.abspath(e.filename), "line": e.lineno} if e.filename and e.lineno else {}
            return None, dict(message="%s: %s" % (type(e).__name__, e.msg), details=details, **where)
        frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.abspath(f.filename) == path]
        where = {"file": path, "line": frames[-1].lineno} if frames else {}
        return None, dict(message="%s: %s" % (type(e).__name__, e), details=details, **where)


# --- requests ------------------------------------------------------------
class _ShimError(Exception):
    """A request the shim cannot serve (no such method, bad mutate_state path...): replied as errored."""


def _defines(module):
    """The public names the solution file itself defines (classes, functions), sorted."""
    return sorted(n for n, v in vars(module).items()
                  if not n.startswith("_") and callable(v)
                  and getattr(v, "__module__", None) == module.__name__)


def _new(req, solution, name):
    """`new`: the class from `class`, its arguments from args.params, each a value or a given
    part of the contract."""
    global _serving
    cls_name = req.get("class")
    if not isinstance(cls_name, str):
        raise _ShimError("new names no class: the shim knows no contract by name")
    _serving = req.get("contract")
    cls = _class_of(solution, cls_name)
    if cls is None:
        return None, {"type": "skipped", "reason": "%s defines no %s" % (name, cls_name)}
    args = req.get("args") or {}
    params = []
    for param in args.get("params") or []:
        if isinstance(param, dict) and "given" in param:
            params.append(_given_part(req.get("contract"), param["given"]))
        elif isinstance(param, dict):
            params.append(param.get("value"))
        else:
            raise _ShimError("new: a parameter is {value} or {given}, not %.100r" % (param,))
    factory = args.get("factory")
    if factory is None:
        return cls(*params), None
    make = getattr(cls, factory, None) if isinstance(factory, str) and not factory.startswith("_") else None
    if not callable(make):
        return None, {"type": "errored", "message": "%s has no %s() to make an instance from a snapshot" % (cls_name, factory)}
    made = make(*params)
    if not isinstance(made, cls):
        what = "None" if made is None else "a %.60s" % type(made).__name__
        return None, {"type": "errored", "message": "%s.%s() returned %s, not the %s it makes from the snapshot: end it with `return` of the instance it makes" % (cls_name, factory, what, cls_name)}
    return made, None


def _step(obj, key):
    try:
        if isinstance(obj, list) and not (type(key) is int and 0 <= key < len(obj)):
            raise IndexError(key)
        return obj[key]
    except (LookupError, TypeError):
        raise _ShimError("mutate_state: no %r in %.100r" % (key, obj))


def _apply_ops(root, ops):
    """Apply mutate_state ops to what state() returned, in place: proving state() is a copy is the point."""
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise _ShimError("mutate_state wants a list of ops, got %.100r" % (ops,))
    for op in ops:
        path, kind = list(op.get("path") or []), op.get("op")
        whole = kind in ("append", "clear")  # these act on the container the path names
        target = root
        for key in (path if whole else path[:-1]):
            target = _step(target, key)
        try:
            if kind == "set" and path:
                if isinstance(target, list):
                    _step(target, path[-1])
                target[path[-1]] = op.get("value")
            elif kind == "delete" and path:
                _step(target, path[-1])
                del target[path[-1]]
            elif kind == "append":
                target.append(op.get("value"))
            elif kind == "clear":
                target.clear()
            else:
                raise TypeError("unknown op")
        except (TypeError, AttributeError) as e:  # e.g. state() gave a tuple where a list belongs
            raise _ShimError("mutate_state: cannot %r at %r (%s)" % (kind, path, e))


def _call(instance, method, args):
    if method == "mutate_state":
        _apply_ops(instance.state(), args[0] if args else None)
        return None
    if method == "mutate_view":  # a deep-copied view of the instance: args are [view, ops]
        view = args[0] if args else None
        read = getattr(instance, view, None) if isinstance(view, str) and not view.startswith("_") else None
        if not callable(read):
            raise _ShimError("%s has no method %s()" % (type(instance).__name__, view))
        _apply_ops(read(), args[1] if len(args) > 1 else None)
        return None
    fn = getattr(instance, method, None) if isinstance(method, str) and not method.startswith("_") else None
    if not callable(fn):
        raise _ShimError("%s has no method %s()" % (type(instance).__name__, method))
    return fn(*args)


_SHIM = os.path.abspath(__file__)
_solution_dir = None  # the folder of the solution: frames in files under it are the student's


def _students(filename):
    """Whether a frame's file is one of the student's: under the solution's folder, not the shim."""
    path = os.path.abspath(filename)
    return (_solution_dir is not None and path != _SHIM
            and path.startswith(_solution_dir + os.sep)
            and "site-packages" not in path.split(os.sep))


def _traceback(e):
    """The frames of e in the student's files, innermost first, as the protocol's traceback."""
    import traceback
    frames = []
    for f in reversed(traceback.extract_tb(e.__traceback__)):
        if _students(f.filename):
            frame = {"file": os.path.abspath(f.filename), "line": f.lineno or 1, "function": f.name}
            if f.line:
                frame["source"] = f.line.strip()
            frames.append(frame)
    return frames[:40]


def _text(e):
    """str(e) for a student's exception, even when its __str__ raises."""
    try:
        return str(e)
    except BaseException:  # their __str__ is theirs to break; the reply must still be sent
        return "<%s whose message could not be read>" % type(e).__name__


def _raised(e):
    if isinstance(e, _CRASHES):
        kind = "crash"
    elif isinstance(e, ValueError):
        kind = "invalid_argument"
    else:
        kind = "error"
    reply = {"type": "raised", "error": {"kind": kind, "class": type(e).__name__, "message": _text(e)}}
    if kind == "error":  # an unexpected error: where in their code it came from helps the student
        frames = _traceback(e)
        if frames:
            reply["traceback"] = frames
    return reply


# --- errors of the student's threads ---------------------------------------
# An exception that ends a thread the solution started has no caller to reach. It is kept
# (at most 8, the rest counted) and told as the `errored` reply of the request being served
# when it is found: the one that started the thread, or a later one if the thread outlived it.
_thread_errors = []
_thread_errors_cut = 0
_thread_lock = threading.Lock()


def _thread_excepthook(args):
    global _thread_errors_cut
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "a thread"
    with _thread_lock:
        if len(_thread_errors) < 8:
            _thread_errors.append((name, args.exc_value))
        else:
            _thread_errors_cut += 1


threading.excepthook = _thread_excepthook


def _thread_error_reply():
    """The `errored` reply telling the threads' errors kept since the last reply, or None."""
    global _thread_errors_cut
    with _thread_lock:
        told, more = _thread_errors[:], _thread_errors_cut
        del _thread_errors[:]
        _thread_errors_cut = 0
    if not told:
        return None
    heads = ["uncaught exception in thread %s: %s: %s" % (str(name)[:200], type(e).__name__, _text(e)[:2000])
             for name, e in told]
    more += len(told) - 1
    reply = {"type": "errored", "message": heads[0] + (" (and %d more)" % more if more else "")}
    frames = _traceback(told[0][1])
    if frames:
        reply["traceback"] = frames
    if len(told) > 1:
        reply["details"] = "\n".join(heads)
    return reply


def _not_plain(value, at="", depth=0):
    """The first part of `value` that is not plain data (dicts, lists, strings, numbers, booleans,
    None) with where it is (`.keys[0]`): ("a set", ".keys"), ("an instance of Foo", ""); None
    when all is plain, or too deep to walk."""
    if value is None or isinstance(value, (str, int, float, bool)) or depth > 100:
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _not_plain(item, "%s[%d]" % (at, i), depth + 1)
            if found:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            shown = ".%s" % key if isinstance(key, str) and key.isidentifier() and len(key) <= 40 else "[%.40r]" % (key,)
            found = _not_plain(item, at + shown, depth + 1)
            if found:
                return found
        return None
    if isinstance(value, (set, frozenset)):
        return "a %s" % type(value).__name__, at
    return "an instance of %.60s" % type(value).__name__, at


def _python_version():
    """platform.python_version(), without importing platform: the first word of sys.version
    ("3.11.7", "3.13.0rc1"), which is what platform reads it from."""
    return sys.version.split()[0] if sys.version else "%d.%d.%d" % sys.version_info[:3]


def main():
    if len(sys.argv) != 2:
        _real_stderr.write("usage: python3 dlqspec_shim.py path/to/solution.py\n")
        _exit(2)
    global _solution_dir
    path = os.path.abspath(sys.argv[1])
    _solution_dir = os.path.dirname(path)
    name = os.path.basename(path)
    # Loaded on the first hello, which describes the contracts whose given parts and errors the
    # solution may import; a dlqspec that sends something else first gets the solution loaded then.
    solution, load_error, loaded = None, None, False
    instance = None
    while True:
        req = _read()
        if req is None:
            _exit(0)
        seq, kind = req.get("seq"), req.get("type")
        if not loaded:
            if kind == "hello":
                _learn_contracts(req.get("exercises"))
            solution, load_error = _load(path)
            loaded = True
        if kind == "hello":
            if load_error:
                _send(dict(seq=seq, type="errored", **load_error))
            else:
                _send({"seq": seq, "type": "hello", "protocol": PROTOCOL,
                       "implementation": {"name": name, "language": "python",
                                          "version": _python_version()},
                       "contracts": [c for c, d in _CONTRACTS.items() if _class_of(solution, d.get("class")) is not None],
                       "defines": _defines(solution), "naming": "snake_case", "features": FEATURES})
            continue
        if kind == "bye":
            _send({"seq": seq, "type": "bye"})
            _exit(0)
        if kind not in ("new", "call"):
            _send({"seq": seq, "type": "errored", "message": "unknown request type %r" % kind})
            continue
        if load_error:
            _send({"seq": seq, "type": "errored", "message": "the solution did not load: " + load_error["message"]})
            continue

        _serve(seq, req.get("foresee"))
        try:
            if kind == "new":
                instance = None  # a failed `new` must not leave the previous instance answering calls
                instance, skipped = _new(req, solution, name)
                reply = skipped or {"type": "return", "value": None}
            elif instance is None:
                raise _ShimError("no instance: send a successful `new` first")
            else:
                args = req.get("args")
                reply = {"type": "return", "value": _call(instance, req.get("method"), args if isinstance(args, list) else [])}
        except _ShimError as e:
            reply = {"type": "errored", "message": str(e)}
        except BaseException as e:  # a crash, SystemExit... are the student's outcome, not ours
            reply = _raised(e)
        finally:
            _serve(None)
        reply = _thread_error_reply() or reply
        _flush_output(seq)
        reply = dict(seq=seq, **reply)
        try:
            _send(reply)
        except (TypeError, ValueError) as e:
            odd = _not_plain(reply.get("value"))
            if odd:
                what, at = odd
                told = "%s() returned %s%s, which JSON cannot carry: return plain dicts/lists (list(a_set), dict(mapping), vars(obj))" % (
                    req.get("method"), what, " at " + at[:200] if at else "")
            else:
                told = "%s() returned a value that is not JSON: %s" % (req.get("method"), e)
            _send({"seq": seq, "type": "errored", "message": told})


if __name__ == "__main__":
    main()
