# rust-side-hang-tree.py: misbehaving dlqspec implementation for the Rust side's tests: appends its pid and a sleeping child's pid to the file named by argv[1], then hangs on the first call, deaf to stdin closing.
import json
import os
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
# One append per start (dlqspec restarts it after each kill), in one write so lines never mix.
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
os.write(fd, b"%d %d\n" % (os.getpid(), child.pid))
os.close(fd)


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "rust-side-hang-tree.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    else:
        while True:  # only a kill ends it, and its child must die with it
            time.sleep(3600)
