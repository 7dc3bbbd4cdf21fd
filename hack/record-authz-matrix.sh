#!/usr/bin/env bash
# Records the authorization matrix of test/integration/authz (every
# question of TestAuthorizationMatrix, asked of kube-apiserver by
# SubjectAccessReviews) into test/integration/authz/testdata/matrix.json.
#
# It starts the reference kube-apiserver (/work/shared/reference-kube,
# --authorization-mode=Node,RBAC) and a kube-controller-manager running
# only the clusterrole-aggregation controller (so that admin, edit, view
# and the matrix's aggregated role have their rules), records, and stops
# both. Run from the repository root.
set -euo pipefail
REF="${REF:-/work/shared/reference-kube}"
export PEER_STATE="${PEER_STATE:-/tmp/peer/state-record-authz}"
eval "$(KUBE_AUTHZ_MODE=Node,RBAC "$REF/start-kube.sh")"
cleanup() {
  [ -n "${KCM_PID:-}" ] && kill "$KCM_PID" 2>/dev/null || true
  "$REF/stop.sh"
}
trap cleanup EXIT
cat > "$PEER_STATE/admin.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: ref, cluster: {server: "$PEER_URL", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$PEER_TOKEN"}}]
contexts: [{name: ref, context: {cluster: ref, user: admin}}]
current-context: ref
KC
"${PEER_BIN:-/tmp/peer/bin}/kube-controller-manager" --kubeconfig="$PEER_STATE/admin.kubeconfig" \
  --controllers=clusterrole-aggregation --leader-elect=false --secure-port=0 \
  > "$PEER_STATE/logs/kube-controller-manager.log" 2>&1 &
KCM_PID=$!
go test ./test/integration/authz -count=1 -run 'TestAuthorizationMatrix$' \
  -record-server "$PEER_URL" -record-token "$PEER_TOKEN" -v
