# exit3.py: misbehaving dlqspec implementation: serves hello, new and one call, then on the next call writes to stderr and exits with status 3.
import json
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


calls = 0
for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "exit3.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer", "outcome-queue"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        calls += 1
        if calls == 2:
            # dlqspec should show this stderr tail along with the exit status.
            sys.stderr.write("exit3.py: simulated fatal error: segfault in native extension\n")
            sys.stderr.flush()
            sys.exit(3)
        reply({"seq": req["seq"], "type": "return", "value": None})
