#!/usr/bin/env bash
# run.sh: the step of action.yml: installs dlqspec when it is not on PATH, runs the specs and
# sets the `report` output. Inputs come as DLQSPEC_SPECS, DLQSPEC_IMPLEMENTATION,
# DLQSPEC_FORMAT and DLQSPEC_ARGS; the exit code is dlqspec's (0 passed, 1 failed, 2 broken).
set -euo pipefail

if ! command -v dlqspec >/dev/null 2>&1; then
  # The action's own checkout is the source: one optimised build (a few minutes), then cached
  # by cargo in ~/.cargo/bin for the rest of the job.
  cargo install --quiet --locked --path "${GITHUB_ACTION_PATH:-$(dirname "$0")/..}"
  PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
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
