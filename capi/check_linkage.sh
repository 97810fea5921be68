#!/bin/bash
# Checks a C ABI library's linkage: it exports exactly the functions mrope_c.h declares (each
# under the version node MROPE_C_1) and needs no shared library outside the allowed list.
# Usage: check_linkage.sh LIBRARY HEADER ALLOWED_NEEDED_REGEX
set -euo pipefail
library=$1 header=$2 allowed=$3

declared=$(grep -oE '^MROPE_C_API [a-z0-9_]+ \*?mrope_[a-z0-9_]+' "$header" |
           grep -oE 'mrope_[a-z0-9_]+$' | sort)
exported=$(nm -D --defined-only "$library" | awk '$2 == "T" {print $3}' | sort)
if [ "$(sed 's/@@MROPE_C_1$//' <<< "$exported")" != "$declared" ]; then
  echo "exports differ from the header's functions:"
  diff <(echo "$declared") <(echo "$exported") || true
  exit 1
fi
if grep -v '@@MROPE_C_1$' <<< "$exported"; then
  echo "exports above lack the version node MROPE_C_1"
  exit 1
fi
other=$(nm -D --defined-only "$library" | awk '$2 != "T" && $2 != "A" {print}')
if [ -n "$other" ]; then
  echo "exported data or weak symbols (only the ABI's functions may be exported):"
  echo "$other"
  exit 1
fi
needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
# A sanitizer build (tools/test.sh's --config=asan / tsan passes) also needs its runtimes.
if grep -qE '^lib(asan|tsan)\.so' <<< "$needed"; then
  allowed+='|lib(asan|ubsan|tsan)\.so\.[0-9]+'
fi
bad=$(grep -vE "^($allowed)$" <<< "$needed" || true)
if [ -n "$bad" ]; then
  echo "needs libraries outside the allowed set ($allowed):"
  echo "$bad"
  exit 1
fi
echo "$(wc -l <<< "$declared") functions exported; needs: $(echo $needed)"
