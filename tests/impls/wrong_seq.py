# wrong_seq.py: misbehaving dlqspec implementation: answers hello correctly, then replies to every later request with the wrong seq (seq + 1).
import json
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "wrong_seq.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer", "outcome-queue"]})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        reply({"seq": req["seq"] + 1, "type": "return", "value": None})  # the bug
