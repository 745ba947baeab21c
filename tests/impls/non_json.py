# non_json.py: misbehaving dlqspec implementation: a stray debug print lands on stdout (a line that is not JSON) when asked to make an instance.
import json
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "non_json.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer", "outcome-queue"]})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        print("DEBUG: making a new consumer")  # the bug: a print on the protocol stream
        reply({"seq": req["seq"], "type": "return", "value": None})
