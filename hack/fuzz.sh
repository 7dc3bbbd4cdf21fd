#!/usr/bin/env bash
# Runs Go fuzz targets, each for FUZZTIME (default 5s) with new inputs on
# top of its seed corpus (testdata/fuzz/<Target> and the f.Add seeds).
#
#   hack/fuzz.sh                          every target listed below
#   hack/fuzz.sh ./test/fuzz:FuzzCreate   the targets given, as pkg:FuzzTarget
#   FUZZTIME=10m hack/fuzz.sh ./pkg/storage:FuzzPlanList
#
# A failing input is written to the package's testdata/fuzz/<Target>/ by
# go test: check it in with the fix, it is then a seed run by go test.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(
  ./pkg/storage:FuzzPlanList
  ./cmd/miniapiserver/app:FuzzWatchCacheSizes
  ./test/fuzz:FuzzCreate
  ./test/fuzz:FuzzPatch
  ./test/fuzz:FuzzSelectors
  ./test/fuzz:FuzzListParameters
  ./pkg/apiserver/filters:FuzzAuthentication
  ./pkg/apiserver/filters:FuzzRequestInfo
)
if [ $# -gt 0 ]; then
  targets=("$@")
fi

fuzztime="${FUZZTIME:-5s}"
for t in "${targets[@]}"; do
  pkg="${t%%:*}"
  name="${t##*:}"
  if [ -z "$pkg" ] || [ -z "$name" ] || [ "$pkg" = "$t" ]; then
    echo "hack/fuzz.sh: $t: want pkg:FuzzTarget" >&2
    exit 2
  fi
  echo "== $pkg $name ($fuzztime)"
  # One worker: the machine is shared, and several of the targets start
  # a server per worker.
  go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 1
done
