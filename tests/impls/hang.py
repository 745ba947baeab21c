# hang.py: misbehaving dlqspec implementation: answers hello and new, then never answers a call (dlqspec must time out and kill it).
import json
import sys
import time


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "hang.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer", "outcome-queue"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        while True:  # stuck, and deaf to stdin closing: only a kill ends it
            time.sleep(3600)
