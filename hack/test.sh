#!/usr/bin/env bash
# The project's test command (the README's, and CI's): every package, with
# the race detector. -short runs the bounded short form of the stress tests;
# STRESS=1 runs their full size too (hack/stress.sh style, ~1 min more).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -race -short -timeout 20m ./...
if [ "${STRESS:-0}" = 1 ]; then
  go test -count=1 -run 'TestStress' -timeout 20m ./pkg/cacher/
fi
