# rust-side-linger.py: misbehaving dlqspec implementation for the Rust side's tests: appends its pid to the file named by argv[1], answers everything (null), answers bye but never exits.
import json
import os
import sys
import time

fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
os.write(fd, b"%d\n" % os.getpid())
os.close(fd)


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "rust-side-linger.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        reply({"seq": req["seq"], "type": "return", "value": None})
while True:  # the bug: it lingers after bye and after stdin closed
    time.sleep(3600)
