#!/bin/bash
# The README's demo: installs the build dependencies, then prints the M-RoPE positions of a
# built-in image + text chat prompt (examples/image_chat.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
bazel run --config=quiet //examples:image_chat
