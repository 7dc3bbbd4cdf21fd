#!/usr/bin/env bash
# The swap test (test/e2e, TestSwap; issue 22): a kubeadm-shaped cluster
# (etcd with client certificates, kube-apiserver with kubeadm's flags,
# kube-controller-manager, kube-scheduler, nodes joined by TLS bootstrap)
# whose kube-apiserver is replaced by miniapiserver with the same command
# line, then run beside it, then put back. Builds (or reuses) the three
# kube components with hack/e2e-components.sh, builds miniapiserver, and
# runs the test. Extra arguments go to `go test`.
#
# Environment: as hack/e2e.sh (E2E_BIN, E2E_TIMEOUT, E2E_WORK; E2E_KEEP=1
# keeps the run's logs and data).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

start=$(date +%s)
E2E_BIN=$("$root/hack/e2e-components.sh")
export E2E_BIN
echo "swap: components ready in $(($(date +%s) - start)) s" >&2

work=${E2E_WORK:-$(mktemp -d /tmp/swap.XXXXXX)}
[[ -n ${E2E_WORK:-} ]] || trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/miniapiserver" ./cmd/miniapiserver)
export MINIAPISERVER=$work/miniapiserver

cd "$root/test/e2e"
start=$(date +%s)
status=0
go test -count=1 -v -timeout "${E2E_TIMEOUT:-15m}" -run '^TestSwap$' . "$@" || status=$?
echo "swap: test ran in $(($(date +%s) - start)) s (exit $status)" >&2
exit "$status"
