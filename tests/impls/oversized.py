# oversized.py: misbehaving dlqspec implementation: with argv[1] == "line" it answers its first call with a 17 MiB line; with "world" it sends dlq.put world calls of 10 MiB entries until dlqspec stops it.
import json
import sys

mode = sys.argv[1]


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "oversized.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    elif mode == "line":
        reply({"seq": req["seq"], "type": "return", "value": "x" * (17 << 20)})
    else:
        body = "y" * (10 << 20)
        n = 0
        while True:
            n += 1
            entry = {"id": "m%d" % n, "body": body, "reason": "permanent", "error": "E: x",
                     "attempts": 1, "first_attempt_at": 0, "failed_at": 0}
            reply({"seq": req["seq"], "type": "world", "n": n, "call": "dlq.put", "args": [entry]})
            if not sys.stdin.readline():
                sys.exit(0)
