# exit_holding_stdout.py: misbehaving dlqspec implementation: on its first call it starts a sleeper in a session of its own that keeps its stdout open, appends the sleeper's pid to the file named by argv[1], and exits with status 7.
import json
import os
import subprocess
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "exit_holding_stdout.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL)
        fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.write(fd, b"%d\n" % sleeper.pid)
        os.close(fd)
        os._exit(7)
