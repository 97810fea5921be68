#!/bin/bash
# A Debian userland with CPython X.Y, for building and testing the wheel of a Python other than
# this machine's (tools/build_wheel.sh --python X.Y, tools/test_wheel.sh --python X.Y):
#   tools/python_chroot.sh X.Y                 prints its root (made once, by debootstrap)
#   tools/python_chroot.sh X.Y --run CMD ...   runs CMD inside it, in the current directory
# The root has the suite's python3.X-dev (headers, sysconfig), python3.X-venv and pybind11-dev,
# and the suite's glibc: bullseye's 2.31 is older than bookworm's 2.36 (a real test of the
# wheel's manylinux_2_28). CMD sees this checkout, /tmp, /dev and /proc at their own paths
# (bind mounts in a mount namespace of its own: nothing stays mounted) and the network (pip;
# this machine's resolv.conf and CA bundle are copied in). pip in it installs offline, from its
# wheelhouse: the "# chroot: X.Y" pins of python/requirements-test.txt (dependencies locked
# there too), downloaded from the package index when the root is made.
# Roots are kept under ~/.cache/mrope-chroots/<suite>-<hash of its packages> (made once, in
# about a minute from deb.debian.org, ~300 MB each). Needs root (debootstrap, chroot, mount).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# The Debian suite that ships each CPython (Debian has one python3.X per release).
declare -A suites=([3.9]=bullseye [3.11]=bookworm [3.13]=trixie)
version=${1:?usage: python_chroot.sh X.Y [--run CMD ...]}
suite=${suites[$version]:-}
if [ -z "$suite" ]; then
  echo "python_chroot.sh: no Debian suite ships CPython $version (have: ${!suites[*]})" >&2
  exit 1
fi
shift
packages=("python$version-dev" "python$version-venv" pybind11-dev)
# What tools/test_wheel.sh's venv needs beside the wheel: the "# chroot: X.Y" pins.
mapfile -t wheels < <(sed -n -E "s/^([^ #]+) +# chroot: $version\$/\1/p" \
  "$repo/python/requirements-test.txt")
wheelhouse=/var/cache/mrope-wheels
root="$HOME/.cache/mrope-chroots/$suite-$(echo "${packages[*]} ${wheels[*]}" | sha256sum |
  cut -c1-12)"

# Runs "$@" inside root $1 in the current directory, with this checkout, /tmp, /dev and /proc.
in_root() {
  # This machine's network setup: its resolver and the CAs it trusts (a proxy's, say).
  cp /etc/resolv.conf "$1/etc/resolv.conf"
  cp /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt"
  # shellcheck disable=SC2016  # expanded by the inner shell
  PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheelhouse" unshare --mount --propagation private sh -c '
    root=$1 repo=$2 cwd=$3; shift 3
    for dir in /proc /dev /tmp "$repo"; do
      mkdir -p "$root$dir" && mount --rbind "$dir" "$root$dir"
    done
    exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
  ' sh "$1" "$repo" "$PWD" "${@:2}"
}

if [ ! -x "$root/usr/bin/python$version" ]; then
  mkdir -p "$(dirname "$root")"
  exec 9>"$root.lock"
  flock 9
  if [ ! -x "$root/usr/bin/python$version" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    start=$SECONDS
    rm -rf "$root.tmp"
    # apt, not debootstrap --include, resolves the packages' dependencies.
    { debootstrap --variant=minbase --include=ca-certificates "$suite" "$root.tmp" \
        http://deb.debian.org/debian &&
      in_root "$root.tmp" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${packages[@]}" &&
      in_root "$root.tmp" apt-get clean &&
      in_root "$root.tmp" "python$version" -m venv "/tmp/mrope-pip-$$" &&
      in_root "$root.tmp" env -u PIP_NO_INDEX "/tmp/mrope-pip-$$/bin/pip" download -q \
        --only-binary=:all: --no-deps -d "$wheelhouse" "${wheels[@]}" &&
      ls "$root.tmp$wheelhouse"; } >"$root.log" 2>&1 ||
      { echo "python_chroot.sh: making $root failed, see $root.log" >&2; exit 1; }
    rm -rf "/tmp/mrope-pip-$$"
    mv "$root.tmp" "$root"
    echo "python_chroot.sh: made $root in $((SECONDS - start)) s" >&2
  fi
  exec 9>&-
fi
if [ "${1:-}" != --run ]; then
  echo "$root"
  exit 0
fi
in_root "$root" "${@:2}"
