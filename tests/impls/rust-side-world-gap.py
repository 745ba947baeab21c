# rust-side-world-gap.py: misbehaving dlqspec implementation for the Rust side's tests: numbers its second world call n=3 instead of n=2.
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        send({"seq": req["seq"], "type": "hello", "protocol": 1,
              "implementation": {"name": "rust-side-world-gap.py", "language": "python", "version": "0"},
              "contracts": ["dlq-consumer"]})
    elif req["type"] == "bye":
        send({"seq": req["seq"], "type": "bye"})
        break
    elif req["type"] == "new":
        send({"seq": req["seq"], "type": "return", "value": None})
    else:
        send({"seq": req["seq"], "type": "world", "n": 1, "call": "clock.now", "args": []})
        sys.stdin.readline()
        send({"seq": req["seq"], "type": "world", "n": 3, "call": "clock.now", "args": []})  # the bug
        sys.stdin.readline()
