#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for a few seconds each
# (FUZZTIME, default 5s): the seed corpora (testdata/fuzz) first, then
# new inputs. A failing input is written to the package's testdata/fuzz
# directory; commit it with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-5s}"

for pkg in $(go list ./... ); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($FUZZTIME)"
    # Minimizing a new input is bounded too, or a slow target stalls.
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 50x "$pkg"
  done
done
