# patched_shim_new.py (hostile): defines both classes, then replaces the shim's own `_new`
# (the shim runs as __main__) so that every `new` answers `skipped`.
import sys


class DLQConsumer:
    pass


class RetryQueue:
    pass


_shim = sys.modules.get("__main__")
if _shim is not None and hasattr(_shim, "_new"):
    _shim._new = lambda req, solution, name: (None, {"type": "skipped", "reason": "not today"})
