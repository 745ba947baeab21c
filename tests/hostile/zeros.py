# zeros.py (hostile): answers every call with as large a value as one protocol line may carry,
# written straight onto the protocol's descriptor below the shim: a list of zeros just under
# 16 MiB (8 million values) where the honest answer is "ok", a string as long where it is
# anything else. Each would cost dlqspec a quarter of a gigabyte kept, compared and rendered;
# dlqspec's memory must stay bounded by what it shows. Written in pieces of 1 MiB, so that the
# solution itself stays small and what is measured is dlqspec.
import os
import sys

from honest import DLQConsumer as _Honest, RetryQueue  # noqa: F401

LINE = 16 << 20
PIECE = "0," * (1 << 19)
SENTINEL = "dlqspec-hostile-zeros"
_shim = sys.modules["__main__"]
_plain_encode = _shim._encode
_plain_write = _shim._write_line


def _encode(message):
    value = message.get("value") if isinstance(message, dict) else None
    if isinstance(value, str) and value.startswith(SENTINEL):
        # A spec whose first step returns "ok" gets the list, any other the string.
        kind = "list" if value.endswith(":ok") else "string"
        return "%s:%s:%d" % (SENTINEL, kind, message["seq"])
    return _plain_encode(message)


def _write_all(data):
    data = memoryview(data.encode())
    while data:
        data = data[os.write(_shim._out_fd, data):]


def _write_line(text):
    if not text.startswith(SENTINEL):
        return _plain_write(text)
    _, kind, seq = text.split(":")
    _write_all('{"seq":%s,"type":"return","value":' % seq)
    _write_all("[" if kind == "list" else '"')
    for _ in range((LINE - 256) // len(PIECE)):
        _write_all(PIECE)
    _write_all("0]}\n" if kind == "list" else '"}\n')


_shim._encode = _encode
_shim._write_line = _write_line


class DLQConsumer(_Honest):
    def process_one(self):
        return SENTINEL + ":" + str(super().process_one())
