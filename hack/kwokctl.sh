#!/usr/bin/env bash
# Brings up clusters with kwok's `kwokctl create cluster --runtime binary`
# (sigs.k8s.io/kwok, $KWOK_VERSION) with miniapiserver as their API server
# and etcd, and checks that a simulated node goes Ready and a Deployment's
# pods go Running and Ready on it. Exits non-zero on the first failure,
# with the tail of each component's log.
#
#   hack/kwokctl.sh
#
# Every binary kwokctl runs is given as a local path, so kwokctl downloads
# nothing:
#   --kube-apiserver-binary, --etcd-binary  a freshly built miniapiserver,
#       as bin/kube-apiserver and bin/etcd (symlinks: run under the name
#       etcd, it is etcd)
#   --kube-controller-manager-binary, --kube-scheduler-binary
#       hack/e2e-components.sh's, at test/e2e/go.mod's kube version
#   --kwok-controller-binary  hack/conformance-components.sh's kwok
#   kubectl (KWOK_KUBECTL_BINARY)  $KUBECTL, default the one on PATH
# kwokctl itself is built from the Go module proxy (`go install
# sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION`) into the same cache folder
# ($E2E_BIN), reused when it already holds that version.
#
# Two clusters, one after the other: kwokctl's defaults (--authorization-
# mode=Node,RBAC, --proxy-client-*, admission on), then the flags kwokctl
# passes when asked (--admission-control=, --runtime-config,
# --feature-gates, --max-requests-inflight=0, --enable-priority-and-
# fairness=false, --v). Not covered: --tracing-config-file (kwokctl's
# --jaeger-port): miniapiserver refuses it (no OpenTelemetry tracing).
#
# Environment:
#   E2E_BIN       cache folder, as hack/e2e-components.sh
#   GOMAXBUILD    parallel compile jobs (go build -p), default nproc
#   KWOK_VERSION  default v0.8.0
#   KUBECTL       kubectl to use, default `command -v kubectl`
#   MINIAPISERVER the server binary to test; default: built from ./cmd/miniapiserver
#   KWOKCTL_KEEP  set: leave the work folder behind (each cluster's
#                 component logs in NAME-logs, kwokctl's in NAME-create.log)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
export KWOK_VERSION
P=${GOMAXBUILD:-$(nproc)}
KUBECTL=${KUBECTL:-$(command -v kubectl)}
start_all=$(date +%s)

E2E_BIN=$(E2E_COMPONENTS="kube-controller-manager kube-scheduler" "$root/hack/e2e-components.sh")
E2E_BIN=$("$root/hack/conformance-components.sh")
export E2E_BIN

# kwokctl --version prints "kwokctl version v0.8.0 go1.x (linux/amd64)".
if [[ $("$E2E_BIN/kwokctl" --version 2>/dev/null) == *"version $KWOK_VERSION "* ]]; then
	echo "kwokctl: kwokctl $KWOK_VERSION cached in $E2E_BIN" >&2
else
	echo "kwokctl: building kwokctl $KWOK_VERSION -> $E2E_BIN (go install -p $P)" >&2
	gobin=$(mktemp -d)
	(cd "$gobin" && CGO_ENABLED=0 GOBIN="$gobin" go install -p "$P" -trimpath \
		-ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
		"sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION")
	mv "$gobin/kwokctl" "$E2E_BIN/kwokctl"
	rm -rf "$gobin"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kwokctl.XXXXXX")
export KWOK_WORKDIR=$work/kwok KWOK_KUBECTL_BINARY=$KUBECTL
clusters=()
# delete NAME: deletes the cluster, its components' logs kept in
# $work/NAME-logs.
delete() {
	[[ -d $KWOK_WORKDIR/clusters/$1 ]] || return 0
	cp -r "$KWOK_WORKDIR/clusters/$1/logs" "$work/$1-logs" 2>/dev/null || true
	"$E2E_BIN/kwokctl" delete cluster --name "$1" >/dev/null 2>&1
}
cleanup() {
	for c in "${clusters[@]}"; do
		delete "$c" || true
	done
	if [[ -z ${KWOKCTL_KEEP:-} ]]; then rm -rf "$work"; else echo "kwokctl: left $work" >&2; fi
}
trap cleanup EXIT

if [[ -n ${MINIAPISERVER:-} ]]; then
	ln -s "$(realpath "$MINIAPISERVER")" "$work/miniapiserver"
else
	echo "kwokctl: building miniapiserver (go build -p $P)" >&2
	(cd "$root" && go build -p "$P" -o "$work/miniapiserver" ./cmd/miniapiserver)
fi
mkdir -p "$work/bin"
ln -s ../miniapiserver "$work/bin/kube-apiserver"
ln -s ../miniapiserver "$work/bin/etcd"

fail() {
	echo "kwokctl: FAIL: $*" >&2
	local logs=$KWOK_WORKDIR/clusters/$name/logs
	for f in "$logs"/*.log; do
		[[ -f $f ]] || continue
		echo "--- $(basename "$f") (last 20 lines)" >&2
		tail -n 20 "$f" | cut -c1-500 >&2
	done
	exit 1
}

# run NAME ADMISSION [kwokctl flags...]: one cluster, a node, a
# Deployment. ADMISSION on: kube's default admission plugins run (the
# ServiceAccount plugin gives each pod its kube-api-access volume); off:
# none do (--admission-control=, as kube-apiserver).
run() {
	name=$1 admission=$2
	shift 2
	local t0 kc
	t0=$(date +%s)
	clusters+=("$name")
	echo "kwokctl: cluster $name: kwokctl create cluster --runtime binary $*" >&2
	"$E2E_BIN/kwokctl" create cluster --name "$name" --runtime binary --quiet-pull \
		--kube-apiserver-binary "$work/bin/kube-apiserver" \
		--etcd-binary "$work/bin/etcd" \
		--kube-controller-manager-binary "$E2E_BIN/kube-controller-manager" \
		--kube-scheduler-binary "$E2E_BIN/kube-scheduler" \
		--kwok-controller-binary "$E2E_BIN/kwok" \
		--wait 1m "$@" >"$work/$name-create.log" 2>&1 ||
		{ tail -n 5 "$work/$name-create.log" >&2; fail "kwokctl create cluster $name"; }
	# kwokctl create cluster reports a server that never came up in its
	# log, not always in its exit status.
	local bad='"level":"ERROR"\|"level":"WARN".*Cluster is not served yet'
	if grep -q "$bad" "$work/$name-create.log"; then
		grep "$bad" "$work/$name-create.log" | cut -c1-2000 >&2
		fail "kwokctl create cluster $name"
	fi
	kc=(--kubeconfig "$KWOK_WORKDIR/clusters/$name/kubeconfig.yaml")
	"$KUBECTL" "${kc[@]}" version >&2 || fail "kubectl version"
	# The API server kwokctl started is this one.
	"$KUBECTL" "${kc[@]}" get --raw /version | grep -q miniapiserver || fail "the API server is not miniapiserver"

	"$KUBECTL" "${kc[@]}" apply -f - >&2 <<-'EOF' || fail "create node"
		apiVersion: v1
		kind: Node
		metadata:
		  name: kwok-node-0
		  annotations:
		    kwok.x-k8s.io/node: fake
		  labels:
		    type: kwok
		    kubernetes.io/hostname: kwok-node-0
		spec:
		  taints:
		  - key: kwok.x-k8s.io/node
		    value: fake
		    effect: NoSchedule
		---
		apiVersion: apps/v1
		kind: Deployment
		metadata:
		  name: web
		  namespace: default
		spec:
		  replicas: 3
		  selector:
		    matchLabels: {app: web}
		  template:
		    metadata:
		      labels: {app: web}
		    spec:
		      nodeSelector: {type: kwok}
		      tolerations:
		      - {key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}
		      containers:
		      - {name: web, image: fake-image}
	EOF
	"$KUBECTL" "${kc[@]}" wait --for=condition=Ready node/kwok-node-0 --timeout=60s >&2 || fail "node not Ready"
	"$KUBECTL" "${kc[@]}" rollout status deployment/web --timeout=90s >&2 || fail "deployment not rolled out"
	"$KUBECTL" "${kc[@]}" wait --for=condition=Ready pod -l app=web --timeout=30s >&2 || fail "pods not Ready"
	local phases
	phases=$("$KUBECTL" "${kc[@]}" get pods -l app=web -o jsonpath='{range .items[*]}{.status.phase}{" "}{end}')
	[[ $phases == "Running Running Running " ]] || fail "pod phases: $phases"
	local vols
	vols=$("$KUBECTL" "${kc[@]}" get pods -l app=web -o jsonpath='{range .items[*]}{.spec.volumes[*].name}{" "}{end}')
	vols=$(echo $vols) # one space between, none around
	case $admission:$vols in
	on:kube-api-access-*) ;;
	off:) ;;
	*) fail "admission $admission, but the pods' volumes are: '$vols'" ;;
	esac
	"$KUBECTL" "${kc[@]}" get nodes,pods -o wide >&2
	delete "$name" || fail "kwokctl delete cluster $name"
	echo "kwokctl: cluster $name: node Ready, 3 pods Running and Ready in $(($(date +%s) - t0)) s" >&2
}

run kwokctl-default on
run kwokctl-flags off --kube-admission=false --kube-runtime-config=api/ga=true \
	--kube-feature-gates=WatchList=true --disable-qps-limits -v=DEBUG
echo "kwokctl: PASS in $(($(date +%s) - start_all)) s" >&2
