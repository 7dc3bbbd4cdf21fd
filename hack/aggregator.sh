#!/usr/bin/env bash
# The aggregation layer's test (test/aggregator): kube's sample-apiserver
# as an extension API server of miniapiserver. Builds miniapiserver, and
# sample-apiserver once (cached in $XDG_CACHE_HOME/miniapiserver-aggregator,
# $HOME/.cache without it: a folder CI should keep), then runs the test.
# Extra arguments go to `go test`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d /tmp/aggregator.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/miniapiserver" ./cmd/miniapiserver)
export MINIAPISERVER=$work/miniapiserver
cd "$root/test/aggregator"
go test -count=1 -v -timeout "${AGGREGATOR_TIMEOUT:-10m}" . "$@"
