#!/usr/bin/env bash
# Benchmarks a miniapiserver built from this tree, end to end:
#   1. startup, twice: on a fresh data dir, then on the data it left;
#   2. a server started again on that data, and the bench tool's "all"
#      scenario (create, get, list, watch, memory) against it;
#   3. optionally raw-etcd against the same etcd (RAW_ETCD=1, embedded etcd).
# Every line is appended to $OUT. Extra arguments are miniapiserver flags:
#
#   LABEL=mini-cache   hack/bench/mini.sh --embedded-etcd-unsafe-no-fsync
#   LABEL=mini-nocache hack/bench/mini.sh --embedded-etcd-unsafe-no-fsync --watch-cache=false
#   BENCH_ARGS="--count 500 --watchers 10" LABEL=dev hack/bench/mini.sh
#
# Environment: LABEL (default mini), PORT (default 16460), OUT (default
# ./bench-results.jsonl), WORK (scratch dir, default a new /tmp dir, removed
# at the end unless KEEP=1), BENCH_ARGS (extra bench flags for steps 2, 3),
# ETCD_PID (with --etcd-servers: the external etcd's PID, for memory).
#
# With the embedded etcd (no --etcd-servers), the server's RSS includes
# etcd's: compare it with kube-apiserver's RSS plus its etcd's.
set -euo pipefail

LABEL=${LABEL:-mini}
PORT=${PORT:-16460}
OUT=${OUT:-$PWD/bench-results.jsonl}
WORK=${WORK:-$(mktemp -d /tmp/bench-mini.XXXXXX)}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
server=https://127.0.0.1:$PORT

(cd "$root" && go build -o "$WORK/miniapiserver" ./cmd/miniapiserver && go build -o "$WORK/bench" ./hack/bench)
cmd="$WORK/miniapiserver --data-dir $WORK/data --secure-port $PORT $*"

pid=
cleanup() {
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid" || true
	fi
	[[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

"$WORK/bench" --label "$LABEL-fresh" --scenario startup --server "$server" --cmd "$cmd" --out "$OUT"
"$WORK/bench" --label "$LABEL" --scenario startup --server "$server" --cmd "$cmd" --out "$OUT"

# shellcheck disable=SC2086 # $cmd is a command line
$cmd >"$WORK/server.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
	curl -skf "$server/readyz" >/dev/null && break
	sleep 0.1
done
etcd_url=$(sed -n 's/.* etcd=\([^ ]*\).*/\1/p' "$WORK/server.log" | head -1)

# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
"$WORK/bench" --label "$LABEL" --scenario all --server "$server" --token-file "$WORK/data/admin-token" \
	--ca-file "$WORK/data/pki/apiserver.crt" --pid "$pid" --etcd-pid "${ETCD_PID:-0}" --out "$OUT" ${BENCH_ARGS:-}
if [[ ${RAW_ETCD:-0} == 1 && -n $etcd_url ]]; then
	# shellcheck disable=SC2086
	"$WORK/bench" --label "$LABEL" --scenario raw-etcd --etcd-url "$etcd_url" --out "$OUT" ${BENCH_ARGS:-}
fi
