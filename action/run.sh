#!/usr/bin/env bash
# run.sh: the last step of action.yml: runs the specs with the dlqspec install.sh put in
# DLQSPEC_BIN (or, without it, the one on PATH) and sets the `report` output. Inputs come as
# DLQSPEC_SPECS, DLQSPEC_IMPLEMENTATION, DLQSPEC_FORMAT and DLQSPEC_ARGS; the exit code is
# dlqspec's (0 passed, 1 failed, 2 broken).
set -euo pipefail

if [ -n "${DLQSPEC_BIN:-}" ]; then
  PATH="$DLQSPEC_BIN:$PATH"
fi
if ! command -v dlqspec >/dev/null 2>&1; then
  echo "dlqspec action: no dlqspec on PATH: action/install.sh installs it" >&2
  exit 2
fi

format="${DLQSPEC_FORMAT:-junit}"
case "$format" in
  junit) extension=xml ;;
  json | gradescope | exercism) extension=json ;;
  tap) extension=tap ;;
  human) extension=txt ;;
  *) echo "dlqspec action: format \`$format\` is not one of junit, json, tap, gradescope, exercism, human" >&2; exit 2 ;;
esac
report="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/dlqspec-report.$extension"

read -ra specs <<< "${DLQSPEC_SPECS:-specs}"
read -ra extra <<< "${DLQSPEC_ARGS:-}"
code=0
dlqspec run "${specs[@]}" --impl "${DLQSPEC_IMPLEMENTATION:-builtin}" --format "$format" \
  --output "$report" "${extra[@]}" || code=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "report=$report" >> "$GITHUB_OUTPUT"
fi
echo "dlqspec report: $report"
exit "$code"
