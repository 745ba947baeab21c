# vanishing_classes.py (hostile): DLQConsumer and RetryQueue answer the shim's first lookup
# (the hello lists both contracts) and are gone at every later one (`new` finds nothing), so
# that a dlqspec trusting `skipped` would skip every spec and call that a pass.


class _Nothing:
    def __init__(self, *args):
        pass


_looked_up = set()


def __getattr__(name):
    if name in ("DLQConsumer", "RetryQueue") and name not in _looked_up:
        _looked_up.add(name)
        return _Nothing
    raise AttributeError(name)
