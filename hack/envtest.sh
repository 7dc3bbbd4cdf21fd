#!/usr/bin/env bash
# The envtest test (test/envtest): controller-runtime's envtest, unchanged,
# with miniapiserver as its kube-apiserver and etcd. Builds miniapiserver
# (or takes $MINIAPISERVER) and runs the test; extra arguments go to
# `go test`:
#
#   hack/envtest.sh
#   hack/envtest.sh -run TestWebhooks
#
# Environment: ENVTEST_TIMEOUT (go test -timeout, default 10m),
# ENVTEST_VERBOSE (controller-runtime's debug log).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

work=$(mktemp -d /tmp/envtest.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [[ -z ${MINIAPISERVER:-} ]]; then
  (cd "$root" && go build -o "$work/miniapiserver" ./cmd/miniapiserver)
  export MINIAPISERVER=$work/miniapiserver
fi

cd "$root/test/envtest"
start=$(date +%s)
status=0
go test -count=1 -v -timeout "${ENVTEST_TIMEOUT:-10m}" . "$@" || status=$?
echo "envtest: test ran in $(($(date +%s) - start)) s (exit $status)" >&2
exit "$status"
