#!/usr/bin/env bash
# The cost of authorization and of encryption at rest (issue 10), measured
# with the load tool:
#   - RBAC vs AlwaysAllow: the same user (a --token-auth-file token of
#     group bench-group, bound to cluster-admin, so that RBAC decides every
#     request: system:masters would skip it) runs the create and get
#     scenarios against a fresh server in each mode;
#   - encryption: creates with ConfigMaps stored through aescbc vs no
#     --encryption-provider-config (identity), under RBAC.
# Environment: OUT (result lines, default ./bench-results.jsonl), COUNT
# (ConfigMaps, default 5000), DURATION (of the get scenario, default 10s).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$PWD/bench-results.jsonl}
COUNT=${COUNT:-5000}
DURATION=${DURATION:-10s}
port=16555
work=$(mktemp -d /tmp/authz-bench.XXXXXX)
pid=
cleanup() { [[ -z $pid ]] || kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
(cd "$root" && go build -o "$work/mini" ./cmd/miniapiserver && go build -o "$work/bench" ./hack/bench)
echo 'bench-token,bench,1001,"bench-group"' >"$work/tokens.csv"
printf %s bench-token >"$work/token"
cat >"$work/aescbc.yaml" <<YAML
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [configmaps]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: $(head -c 32 /dev/urandom | base64)
  - identity: {}
YAML

# run LABEL FLAGS...: a fresh server with FLAGS, the user bound, then the
# create and get scenarios.
run() {
	local label=$1 data=$work/data-$1
	shift
	"$work/mini" --data-dir "$data" --secure-port $port --embedded-etcd-unsafe-no-fsync \
		--token-auth-file "$work/tokens.csv" "$@" >"$work/$label.log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		curl -skf "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	kubectl --kubeconfig "$data/kubeconfig" create clusterrolebinding bench \
		--clusterrole=cluster-admin --group=bench-group >/dev/null
	for scenario in create get; do
		"$work/bench" --label "$label" --server "https://127.0.0.1:$port" --token-file "$work/token" \
			--insecure-skip-tls-verify --pid "$pid" --scenario $scenario --count "$COUNT" \
			--duration "$DURATION" --out "$OUT"
	done
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
}

run rbac --authorization-mode=RBAC
run alwaysallow --authorization-mode=AlwaysAllow
run rbac-aescbc --authorization-mode=RBAC --encryption-provider-config "$work/aescbc.yaml"
