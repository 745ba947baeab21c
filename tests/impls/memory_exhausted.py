# memory_exhausted.py: misbehaving dlqspec implementation: on its first call it asks for 4 GiB and dies of the MemoryError (a traceback on stderr, status 1).
import json
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "memory_exhausted.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        hoard = [bytearray(4 << 30)]
        reply({"seq": req["seq"], "type": "return", "value": len(hoard)})
