# undecodable.py: misbehaving dlqspec implementation: answers its first call with a line that is no message dlqspec can read: JSON nested 1000 deep (argv[1] == "deep") or JSON holding a byte that is not UTF-8 ("utf8").
import json
import sys

mode = sys.argv[1]


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        reply({"seq": req["seq"], "type": "hello", "protocol": 1,
               "implementation": {"name": "undecodable.py", "language": "python", "version": "0"},
               "contracts": ["dlq-consumer"]})
    elif req["type"] == "new":
        reply({"seq": req["seq"], "type": "return", "value": None})
    elif req["type"] == "bye":
        reply({"seq": req["seq"], "type": "bye"})
        break
    elif mode == "deep":
        sys.stdout.write('{"seq": %d, "type": "return", "value": %s%s}\n' % (req["seq"], "[" * 1000, "]" * 1000))
        sys.stdout.flush()
    else:
        sys.stdout.buffer.write(b'{"seq": %d, "type": "return", "value": "caf\xe9"}\n' % req["seq"])
        sys.stdout.flush()
