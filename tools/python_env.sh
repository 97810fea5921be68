#!/bin/bash
# The pinned Python test environment (python/requirements-test.txt): a venv of Debian's
# /usr/bin/python3 (the interpreter the extension is built for) with the references mrope is
# checked against, and a directory per "# target: NAME" line beside it ("# target: NAME no-deps":
# exactly the lines of NAME, without their dependencies).
#
#   tools/python_env.sh           makes it if missing (idempotent), prints its directory
#   tools/python_env.sh --locate  prints its directory, or fails if it is not made yet
#
# Layout under $MROPE_PYENV_CACHE (default ~/.cache/mrope-pyenv):
#   wheels/           every wheel ever downloaded: a rebuild whose wheels are here is offline
#   env-<key>/        the venv; <key> is the pin file's hash, so a bump makes a new one
#   env-<key>/targets/NAME/   a target's packages (pip install --target)
#   env-<key>/.complete       written last: an environment without it is remade
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
pins="$repo/python/requirements-test.txt"
home=$(getent passwd "$(id -u)" | cut -d: -f6)  # Bazel tests run without $HOME
cache="${MROPE_PYENV_CACHE:-$home/.cache/mrope-pyenv}"
env="$cache/env-$(sha256sum "$pins" | cut -c1-12)"

if [ "${1:-}" = --locate ]; then
  if [ ! -f "$env/.complete" ]; then
    echo "no Python test environment for $pins at $env: run tools/python_env.sh" >&2
    exit 1
  fi
  touch "$env/.complete" 2>/dev/null || true  # in use (the clean-up below); read-only in tests
  echo "$env"
  exit 0
fi
[ -f "$env/.complete" ] && { touch "$env/.complete"; echo "$env"; exit 0; }

mkdir -p "$cache/wheels"
exec 9>"$cache/.lock"
flock 9
[ -f "$env/.complete" ] && { echo "$env"; exit 0; }  # made while we waited
start=$SECONDS
export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One requirements file per destination: main.txt (untagged lines) and NAME.txt per target.
python3 - "$pins" "$work" <<'EOF'
import re, sys
pins, work = sys.argv[1:]
groups = {"main": []}
for line in open(pins):
    spec, _, comment = line.partition("#")
    if not spec.strip() or comment.strip().startswith(("build-tool:", "chroot:")):
        continue  # pins of a build tool or another CPython: their scripts install them
    target = re.match(r"\s*target:\s*(\S+)(\s+no-deps)?", comment)
    name = target.group(1) if target else "main"
    groups.setdefault(name, []).append(spec.strip())
    if target and target.group(2):
        open(f"{work}/{name}.no-deps", "w").close()
for name, lines in groups.items():
    open(f"{work}/{name}.txt", "w").write("\n".join(lines) + "\n")
EOF

# install DEST PIP_ARGS...: into the venv (DEST "") or a --target DEST, from the wheelhouse
# alone when it has everything (offline), else after downloading what is missing into it.
install() {
  local dest=()
  [ -n "$1" ] && dest=(--target "$1")
  shift
  if ! "$env/bin/pip" install -q --no-index --find-links "$cache/wheels" "${dest[@]}" "$@" \
       2>/dev/null; then
    "$env/bin/pip" download -q -d "$cache/wheels" "$@" >&2
    "$env/bin/pip" install -q --no-index --find-links "$cache/wheels" "${dest[@]}" "$@" >&2
  fi
}

rm -rf "$env"
/usr/bin/python3 -m venv "$env" >&2
install "" -r "$work/main.txt"
for reqs in "$work"/*.txt; do
  name=$(basename "$reqs" .txt)
  [ "$name" = main ] && continue
  if [ -f "$work/$name.no-deps" ]; then
    install "$env/targets/$name" --no-deps -r "$reqs"
    continue
  fi
  # A target shares the venv's pins where it does not name the package itself (numpy).
  grep -v -i -E "^($(sed -E 's/[=<>!~ ].*//' "$reqs" | paste -sd'|'))[=<>!~ ]" \
    "$work/main.txt" >"$work/$name.constraints" || true
  install "$env/targets/$name" -c "$work/$name.constraints" -r "$reqs"
done
"$env/bin/pip" freeze >"$env/freeze.txt"
touch "$env/.complete"
# Environments of other pins go once unused for 3 days (worktrees of other branches use them
# meanwhile; .complete is touched on every use); the wheelhouse stays (offline rebuilds).
for old in "$cache"/env-*; do
  [ "$old" = "$env" ] || [ -n "$(find "$old/.complete" -mtime -3 2>/dev/null)" ] ||
    rm -rf "$old"
done
echo "python test environment made in $((SECONDS - start)) s: $env" >&2
echo "$env"
