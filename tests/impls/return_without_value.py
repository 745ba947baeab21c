# return_without_value.py: misbehaving dlqspec implementation: answers hello and new correctly, then answers every call with a `return` that carries no value, as a shim that lost it would (JSON.stringify drops a key whose value is undefined).
import json
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "return_without_value.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer", "outcome-queue"]})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    else:
        reply({"seq": req["seq"], "type": "return"})  # the bug
