# hostile_output.py: misbehaving dlqspec implementation: its hello, its stderr and its exit carry terminal escapes and GitHub workflow commands.
import json
import sys


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "hostile\x1b]0;pwned\x07\n::error::hello-injected",
                                  "language": "python\x1b[2J", "version": "0"},
               "contracts": ["dlq-consumer", "outcome-queue"]})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    else:
        # dlqspec shows this stderr tail with the exit status: escaped, and no line a command.
        sys.stderr.write("\x1b[31mred\x1b[0m bell\x07 nul\x00 csi\u009b2J\n")
        sys.stderr.write("::add-mask::stderr-injected\n")
        sys.stderr.write("   ::error file=x::stderr-injected\n")
        sys.stderr.write("Traceback ##[error]stderr-injected\r::warning::after-cr\n")
        sys.stderr.flush()
        sys.exit(3)
