# cpu_burner.py: misbehaving dlqspec implementation: on its first call it computes forever (only its CPU-time limit stops it).
import json
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "cpu_burner.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        n = 0
        while True:
            n += 1
