# starved_start.py: misbehaving dlqspec implementation: under a data limit below 1 GiB it cannot "start", prints a runtime's fatal report on stdout and exits 1, as a JVM that cannot reserve its heap does; with `--says-memory` the report says memory, with `--lingers` it keeps running after it.
import json
import resource
import sys
import time

soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
if soft != resource.RLIM_INFINITY and soft < (1 << 30):
    if "--says-memory" in sys.argv:
        print("#\n# There is insufficient memory for the Java Runtime Environment to continue.\n#")
    else:
        print("Error occurred during initialization of the runtime\nthe runtime gives up")
    sys.stdout.flush()
    print("starved_start.py: see the report on stdout", file=sys.stderr)
    if "--lingers" in sys.argv:
        time.sleep(60)
    sys.exit(1)

for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        sys.stdout.write(json.dumps({"seq": req["seq"], "type": "hello", "protocol": 1,
                                     "implementation": {"name": "starved_start.py", "language": "python", "version": "0"},
                                     "contracts": []}) + "\n")
    else:
        sys.stdout.write(json.dumps({"seq": req["seq"], "type": "bye"}) + "\n")
        break
    sys.stdout.flush()
