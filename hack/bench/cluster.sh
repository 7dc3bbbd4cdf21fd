#!/usr/bin/env bash
# Runs the cluster scenario (issue 13) against miniapiserver and then
# kube-apiserver 1.37.2 (../shared/reference-kube), one after the other so
# that they do not share the CPU, each on a fresh etcd started the same
# way (the reference's etcd-embed, etcd v3.7.3), and appends both results
# to $OUT. Extra arguments are bench flags for both runs:
#
#   hack/bench/cluster.sh --nodes 1000 --pods-per-node 20 --duration 60s
#   SERVERS=mini hack/bench/cluster.sh --nodes 100          # one server only
#
# Environment: SERVERS (default "mini kube"), OUT (default
# ./bench-results.jsonl), LABEL (a suffix of each run's label), WORK
# (scratch dir, default a new /tmp dir, removed at the end unless KEEP=1),
# PEER_BIN (the reference's binaries, default /tmp/peer/bin; built by
# ../shared/reference-kube/build.sh), PROFILE_DIR (save each server's CPU
# profile of the steady phase there as <server>.cpu.pb.gz, and its heap
# profile at its end as <server>.cpu.pb.gz.heap; miniapiserver
# then runs with --profiling, kube-apiserver profiles by default).
# Both etcds are thrown away after their run, so the scenario leaves its
# objects in place (--skip-cleanup).
# miniapiserver runs with --etcd-servers, so its RSS is its own: compare
# rss_bytes with kube-apiserver's, and etcd_rss_bytes with each other.
set -euo pipefail

SERVERS=${SERVERS:-mini kube}
OUT=${OUT:-$PWD/bench-results.jsonl}
WORK=${WORK:-$(mktemp -d /tmp/bench-cluster.XXXXXX)}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ref=$(cd "$root/.." && pwd)/shared/reference-kube
export PEER_BIN=${PEER_BIN:-/tmp/peer/bin}

(cd "$root" && go build -o "$WORK/miniapiserver" ./cmd/miniapiserver && go build -o "$WORK/bench" ./hack/bench)

pids=()
cleanup() {
	for pid in "${pids[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid"
			for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	pids=()
}
trap 'cleanup; [[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"' EXIT

# start_etcd starts a fresh etcd in $1 and sets etcd_url and etcd_pid.
start_etcd() {
	eval "$(PEER_STATE=$1 START_APISERVER=0 "$ref/start-kube.sh")"
	etcd_url=$ETCD_URL etcd_pid=$ETCD_PID
	pids+=("$etcd_pid")
}

for server in $SERVERS; do
	state=$WORK/$server
	profile=()
	if [[ -n ${PROFILE_DIR:-} ]]; then
		mkdir -p "$PROFILE_DIR"
		profile=(--cpu-profile "$PROFILE_DIR/$server.cpu.pb.gz")
	fi
	mkdir -p "$state"
	start_etcd "$state"
	case $server in
	mini)
		url=https://127.0.0.1:16470
		"$WORK/miniapiserver" --data-dir "$state/data" --secure-port 16470 --etcd-servers "$etcd_url" \
			${PROFILE_DIR:+--profiling} >"$state/server.log" 2>&1 &
		pid=$!
		pids=("$pid" "${pids[@]}")
		for _ in $(seq 600); do
			curl -skf "$url/readyz" >/dev/null && break
			sleep 0.1
		done
		auth=(--token-file "$state/data/admin-token" --ca-file "$state/data/pki/apiserver.crt")
		;;
	kube)
		eval "$(PEER_STATE=$state USE_ETCD_URL=$etcd_url "$ref/start-kube.sh")"
		url=$PEER_URL pid=$PEER_PID
		pids=("$pid" "${pids[@]}")
		printf %s "$PEER_TOKEN" >"$state/token"
		auth=(--token-file "$state/token" --insecure-skip-tls-verify)
		;;
	*)
		echo "cluster.sh: unknown server $server (mini or kube)" >&2
		exit 2
		;;
	esac
	"$WORK/bench" --label "$server${LABEL:+-$LABEL}" --scenario cluster --server "$url" "${auth[@]}" \
		--pid "$pid" --etcd-pid "$etcd_pid" --out "$OUT" --skip-cleanup "${profile[@]}" "$@"
	cleanup
done
