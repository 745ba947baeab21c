# zeros.py (hostile): answers every call with as large a value as one protocol line may carry,
# written straight into the shim's encoder: a list of zeros just under 16 MiB (8 million
# values) where the honest answer is "ok", a string as long where it is anything else. Each would cost dlqspec a quarter of a gigabyte
# kept, compared and rendered; dlqspec's memory must stay bounded by what it shows.
import sys

from honest import DLQConsumer as _Honest, RetryQueue  # noqa: F401

LINE = 16 << 20
SENTINEL = "dlqspec-hostile-zeros"
_shim = sys.modules["__main__"]
_plain = _shim._encode
_bodies = {}


def _body(kind, room):
    if kind not in _bodies:
        if kind == "list":
            count = room // 2
            _bodies[kind] = "[" + "0," * (count - 1) + "0]"
        else:
            _bodies[kind] = '"' + "0," * (room // 2) + '"'
    return _bodies[kind]


def _encode(message):
    value = message.get("value") if isinstance(message, dict) else None
    if isinstance(value, str) and value.startswith(SENTINEL):
        head = '{"seq":%d,"type":"return","value":' % message["seq"]
        # A spec whose first step returns "ok" gets the list, any other the string.
        kind = "list" if value.endswith(":ok") else "string"
        return head + _body(kind, LINE - 256) + "}"
    return _plain(message)


_shim._encode = _encode


class DLQConsumer(_Honest):
    def process_one(self):
        return SENTINEL + ":" + str(super().process_one())
