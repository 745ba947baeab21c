#!/usr/bin/env bash
# install.sh: the install step of action.yml. Puts dlqspec VERSION in DIR/bin and DIR/bin on
# PATH for the job's later steps, the cheapest way first:
#   path     a `dlqspec` on PATH already (installed by an earlier step): nothing to do;
#   cache    DIR/bin/dlqspec is there (the Actions cache restored it, or the runner kept it);
#   release  the prebuilt binary of this version and platform, from the release it was
#            published with (dlqspec-VERSION-TARGET.tar.gz and its .sha256);
#   built    `cargo install` of the action's own checkout, once: the next step caches DIR.
# Inputs come as DLQSPEC_VERSION, DLQSPEC_TARGET, DLQSPEC_DIR (where.sh's outputs) and
# DLQSPEC_RELEASE_URL (the action's `release-url`). Outputs: `installed`, the way taken, and
# `bin`, the folder of the program (empty for one already on PATH), which is put on the job's
# PATH too.
set -euo pipefail

action="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
version="$DLQSPEC_VERSION"
target="${DLQSPEC_TARGET:-}"
dir="$DLQSPEC_DIR"
bin="$dir/bin/dlqspec"

say() { echo "dlqspec action: $*"; }
# The version a program says it is, empty when it does not start (a binary of another
# platform, or one built against a newer C library than the runner has).
says_version() { "$1" --version 2>/dev/null | sed -n 's/^dlqspec //p' | head -n 1; }
done_as() {
  echo "installed=$1" >> "${GITHUB_OUTPUT:-/dev/null}"
  if [ "$1" != path ]; then
    echo "bin=$dir/bin" >> "${GITHUB_OUTPUT:-/dev/null}"
    echo "$dir/bin" >> "${GITHUB_PATH:-/dev/null}"
  fi
  exit 0
}

if command -v dlqspec >/dev/null 2>&1; then
  say "using $(command -v dlqspec) ($(says_version dlqspec || true)), already on PATH"
  done_as path
fi

if [ -x "$bin" ]; then
  if [ "$(says_version "$bin")" = "$version" ]; then
    say "using dlqspec $version from the cache ($bin)"
    done_as cache
  fi
  say "$bin is not a dlqspec $version that runs here: replacing it"
fi

# Where releases are: the input, else this action's own repository's GitHub releases (read
# off the folder the runner unpacked the action to, _actions/OWNER/REPO/REF, when the context
# does not say); none for a local action (`uses: ./`).
base="${DLQSPEC_RELEASE_URL:-}"
if [ -z "$base" ]; then
  repository="${DLQSPEC_ACTION_REPOSITORY:-}"
  if [ -z "$repository" ] && [[ "$action" =~ /_actions/([^/]+)/([^/]+)/[^/]+/?$ ]]; then
    repository="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
  fi
  if [ -n "$repository" ]; then
    base="${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download"
  fi
fi

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  else
    shasum -a 256 "$1" | cut -d ' ' -f 1
  fi
}

# Downloads, checks and unpacks the release's binary into DIR/bin; fails, saying why, when
# there is none for this version and platform or it does not run here.
from_release() {
  local asset="dlqspec-$version-$target.tar.gz"
  local url="${base%/}/v$version/$asset"
  local work
  work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/dlqspec-release.XXXXXX")
  if ! curl --fail --silent --show-error --location --retry 2 --max-time 300 \
      --output "$work/$asset" "$url" \
    || ! curl --fail --silent --show-error --location --retry 2 --max-time 60 \
      --output "$work/$asset.sha256" "$url.sha256"; then
    say "no prebuilt dlqspec $version for $target at $url"
    rm -rf "$work"
    return 1
  fi
  local expected
  expected=$(cut -d ' ' -f 1 < "$work/$asset.sha256")
  if [ "$(sha256 "$work/$asset")" != "$expected" ]; then
    say "$asset does not match its .sha256: not used"
    rm -rf "$work"
    return 1
  fi
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$asset" -C "$work/unpacked"
  if [ "$(says_version "$work/unpacked/dlqspec")" != "$version" ]; then
    say "the prebuilt dlqspec $version for $target does not run on this runner"
    rm -rf "$work"
    return 1
  fi
  mkdir -p "$dir/bin"
  mv -f "$work/unpacked/dlqspec" "$bin"
  rm -rf "$work"
  say "installed the prebuilt dlqspec $version for $target from $url"
}

if [ -n "$target" ] && [ -n "$base" ] && [ "$base" != none ] && command -v curl >/dev/null 2>&1; then
  if from_release; then
    done_as release
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  say "no prebuilt dlqspec $version for ${target:-this platform}, and no cargo to build one: add a Rust toolchain step (e.g. dtolnay/rust-toolchain@stable) before this one" >&2
  exit 2
fi
say "building dlqspec $version from the action's checkout (once: the next step caches it)"
cargo install --locked --force --path "$action" --root "$dir"
if [ "$(says_version "$bin")" != "$version" ]; then
  say "cargo install left no dlqspec $version at $bin" >&2
  exit 2
fi
done_as built
