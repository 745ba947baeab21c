# stops_reading.py: a `cmd:` implementation that puts a 4 MiB entry in the DLQ, asks for the entries, and never reads the answer (nor anything after it); its pid is appended to the file named by $DLQSPEC_TEST_PIDS.
import json
import os
import sys
import time

os.write(os.open(os.environ["DLQSPEC_TEST_PIDS"], os.O_WRONLY | os.O_CREAT | os.O_APPEND), b"%d\n" % os.getpid())


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    seq = req["seq"]
    if req["type"] == "hello":
        reply({"seq": seq, "type": "hello", "protocol": 1,
               "implementation": {"name": "stops_reading.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "new":
        reply({"seq": seq, "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": seq, "type": "bye"})
        break
    else:
        entry = {"id": "big", "body": "x" * (4 << 20), "reason": "permanent", "error": "E: x",
                 "attempts": 1, "first_attempt_at": 0, "failed_at": 0}
        reply({"seq": seq, "type": "world", "n": 1, "call": "dlq.put", "args": [entry]})
        sys.stdin.readline()
        # The answer is 4 MiB, far more than a pipe holds; it is never read.
        reply({"seq": seq, "type": "world", "n": 2, "call": "dlq.entries", "args": []})
        while True:
            time.sleep(3600)
