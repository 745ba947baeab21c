#!/bin/sh
# whoami.sh: says which uid it runs as, on stderr, and leaves: the run reports it.
echo "running as uid=$(id -u)" >&2
exit 3
