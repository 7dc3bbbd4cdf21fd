#!/usr/bin/env bash
# The chaos suite (test/chaos) for longer than CI runs it: three
# miniapiserver replicas over a 3-member etcd, writers, watchers and
# informers, the fault schedule repeated for DURATION (default 10m), then
# every client's record checked against etcd's history.
#
#   hack/chaos.sh            # 10 minutes
#   hack/chaos.sh 30m        # longer
#   RACE=1 hack/chaos.sh 5m  # the test binary (clients, etcd) under -race
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10m}
race=()
if [ "${RACE:-0}" = 1 ]; then race=(-race); fi
exec go test "${race[@]}" -count=1 -v -run 'TestChaos$' -timeout 3h ./test/chaos/ -chaos.duration "$duration"
