#!/usr/bin/env bash
# where.sh: the first step of action.yml: which dlqspec this action is (its Cargo.toml's
# version), which prebuilt binary fits the runner (a Rust target), and where it is kept: the
# folder and the Actions cache key, both named by the version and the runner's platform, so
# one version is compiled once per platform and never again. Outputs (to $GITHUB_OUTPUT):
# version, target (empty where no binary is published), dir, key, and on-path (`true` when a
# `dlqspec` is on PATH already, which the action then uses as it is).
set -euo pipefail

action="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
version=$(awk '
  /^\[/ { section = $0 }
  section == "[workspace.package]" && /^version *=/ { gsub(/.*= *"|".*/, ""); print; exit }
' "$action/Cargo.toml")
if [ -z "$version" ]; then
  echo "dlqspec action: no version in $action/Cargo.toml's [workspace.package]" >&2
  exit 2
fi

# The runner's platform as GitHub names it, else as this machine says.
os="${RUNNER_OS:-$(uname -s)}"
arch="${RUNNER_ARCH:-$(uname -m)}"
case "$os/$arch" in
  Linux/X64 | Linux/x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux/ARM64 | Linux/aarch64) target=aarch64-unknown-linux-gnu ;;
  macOS/X64 | Darwin/x86_64) target=x86_64-apple-darwin ;;
  macOS/ARM64 | Darwin/arm64) target=aarch64-apple-darwin ;;
  *) target= ;;
esac
platform="${target:-$os-$arch}"
# The runner image (ubuntu22, ubuntu24, macos14...) too: a program built on one image's C
# library may not start on an older one.
key="dlqspec-$version-$platform${ImageOS:+-$ImageOS}"
dir="${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}}/dlqspec/$version/$platform"

on_path=false
if command -v dlqspec >/dev/null 2>&1; then
  on_path=true
fi

{
  echo "version=$version"
  echo "target=$target"
  echo "dir=$dir"
  echo "key=$key"
  echo "on-path=$on_path"
} >> "${GITHUB_OUTPUT:-/dev/null}"
echo "dlqspec $version for $platform: kept in $dir (cache key $key)"
