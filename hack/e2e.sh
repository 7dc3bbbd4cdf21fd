#!/usr/bin/env bash
# The cluster test (test/e2e): builds (or reuses) kube-controller-manager
# and kube-scheduler with hack/e2e-components.sh, builds miniapiserver,
# and runs the test. Extra arguments go to `go test`:
#
#   hack/e2e.sh                      # against miniapiserver
#   hack/e2e.sh -reference           # against the reference kube-apiserver
#                                    # (/work/shared/reference-kube, $PEER_BIN)
#   hack/e2e.sh -run 'TestCluster/checks/job'
#
# (The swap test, TestSwap in the same module, has its own hack/swap.sh.)
#
# Environment: E2E_BIN (the components' cache folder, see
# hack/e2e-components.sh; cache it in CI), E2E_TIMEOUT (go test -timeout,
# default 15m), E2E_WORK (scratch folder for the server binary, default a
# new temporary one, removed on exit).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

start=$(date +%s)
E2E_BIN=$(E2E_COMPONENTS="kube-controller-manager kube-scheduler" "$root/hack/e2e-components.sh")
export E2E_BIN
echo "e2e: components ready in $(($(date +%s) - start)) s" >&2

work=${E2E_WORK:-$(mktemp -d /tmp/e2e.XXXXXX)}
[[ -n ${E2E_WORK:-} ]] || trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/miniapiserver" ./cmd/miniapiserver)
export MINIAPISERVER=$work/miniapiserver

cd "$root/test/e2e"
start=$(date +%s)
status=0
go test -count=1 -v -timeout "${E2E_TIMEOUT:-15m}" -run '^TestCluster$' . "$@" || status=$?
echo "e2e: test ran in $(($(date +%s) - start)) s (exit $status)" >&2
exit "$status"
