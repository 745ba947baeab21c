# wrong_version.py: misbehaving dlqspec implementation: answers hello with protocol 2, which dlqspec (protocol 1) must refuse.
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        sys.stdout.write(json.dumps({"seq": req["seq"], "type": "hello", "protocol": 2,
                                     "implementation": {"name": "wrong_version.py", "language": "python", "version": "0"},
                                     "contracts": ["dlq-consumer", "outcome-queue"]}) + "\n")
        sys.stdout.flush()
    elif req["type"] == "bye":
        sys.stdout.write(json.dumps({"seq": req["seq"], "type": "bye"}) + "\n")
        break
    else:
        sys.stdout.write(json.dumps({"seq": req["seq"], "type": "errored", "message": "protocol 2 only"}) + "\n")
        sys.stdout.flush()
