# rust-side-false-foresight.py: misbehaving dlqspec implementation for the Rust side's tests: lists the foresight feature, then marks a world call foreseen that its request did not foresee.
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        send({"seq": req["seq"], "type": "hello", "protocol": 1,
              "implementation": {"name": "rust-side-false-foresight.py", "language": "python", "version": "0"},
              "contracts": ["dlq-consumer"], "features": ["foresight"]})
    elif req["type"] == "bye":
        send({"seq": req["seq"], "type": "bye"})
        break
    elif req["type"] == "new":
        send({"seq": req["seq"], "type": "return", "value": None})
    else:
        # The bug: the request foresaw queue.receive() first; this goes on without an answer to a call it did not foresee.
        send({"seq": req["seq"], "type": "world", "n": 1, "call": "dlq.has", "args": ["zzz"], "foreseen": True})
        sys.stdin.readline()
