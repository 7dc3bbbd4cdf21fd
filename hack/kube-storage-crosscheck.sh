#!/usr/bin/env bash
# Cross-checks what miniapiserver and the reference kube-apiserver v1.37.2
# store in etcd (a development tool, not CI: it needs the reference build,
# /work/shared/reference-kube/README.md):
#   1. kube-apiserver over a fresh etcd creates the objects of
#      kube-storage-crosscheck.yaml (built-in kinds at kube's historical
#      keys, a StatefulSet with claim templates, a CRD and a custom resource);
#   2. it is stopped; miniapiserver over the same etcd serves them and
#      changes some (labels, a scale, a patch of the custom resource) and
#      creates others;
#   3. it is stopped; kube-apiserver over the same etcd serves what
#      miniapiserver wrote.
# Only the processes it starts are stopped. State goes to $STATE
# (default a new /tmp dir).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${STATE:-$(mktemp -d /tmp/storage-crosscheck.XXXXXX)}
MINI_PORT=${MINI_PORT:-17544}
pids=()
# Servers stop before the etcd they use (started first, stopped last):
# kube-apiserver's graceful shutdown hangs on an etcd that is gone.
cleanup() {
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		p=${pids[i]}
		kill "$p" 2>/dev/null || continue
		for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
	done
}
trap cleanup EXIT
wait_ready() { # url [token]
	for _ in $(seq 1 300); do
		[ "$(curl -sk -m 2 ${2:+-H "Authorization: Bearer $2"} "$1/readyz")" = ok ] && return 0
		sleep 0.3
	done
	echo "not ready: $1" >&2
	return 1
}

(cd "$root" && go build -o "$STATE/miniapiserver" ./cmd/miniapiserver)
eval "$(PEER_STATE=$STATE/peer /work/shared/reference-kube/start-kube.sh)"
pids+=("$ETCD_PID" "$PEER_PID")
K="kubectl --server $PEER_URL --token $PEER_TOKEN --insecure-skip-tls-verify"
$K apply -f "$root/hack/kube-storage-crosscheck.yaml"
sleep 3 # the CRD established
echo '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"xk"},"spec":{"size":3}}' | $K apply -f -
kill "$PEER_PID"
wait "$PEER_PID" 2>/dev/null || true

echo "== miniapiserver over kube's etcd"
"$STATE/miniapiserver" --etcd-servers="$ETCD_URL" --data-dir "$STATE/mini" --secure-port 0 \
	--service-cluster-ip-range=10.96.0.0/16 --insecure-port "$MINI_PORT" > "$STATE/mini.log" 2>&1 &
mini=$!
pids+=("$mini")
wait_ready "http://127.0.0.1:$MINI_PORT"
M="kubectl --server http://127.0.0.1:$MINI_PORT"
$M get ns,cm,secret,svc,endpoints,sts,deploy,ing,rc,widgets -n xk
$M get nodes,crd
$M label svc svc -n xk updated-by=mini
$M scale sts sts -n xk --replicas=2
$M create cm mini-cm -n xk --from-literal=a=b
$M create svc clusterip mini-svc -n xk --tcp=8080:8080
$M patch widget w1 -n xk --type=merge -p '{"spec":{"size":4}}'
$M label node node-k updated-by=mini
$M label crd widgets.example.com updated-by=mini
kill "$mini"
wait "$mini" 2>/dev/null || true

echo "== kube-apiserver over what miniapiserver wrote"
"$PEER_APISERVER_CMD" > "$STATE/peer/logs/kube-apiserver-2.log" 2>&1 &
kube2=$!
pids+=("$kube2")
wait_ready "$PEER_URL" "$PEER_TOKEN"
$K get svc,cm,sts -n xk --show-labels
$K get widgets -n xk -o jsonpath='{.items[0].spec}{"\n"}'
$K get nodes,crd --show-labels
echo "state in $STATE"
