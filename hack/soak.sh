#!/usr/bin/env bash
# Soak: one miniapiserver (embedded etcd) built from this tree under mixed
# load with watch churn (hack/soak) for DURATION (default 10m); goroutines,
# heap and open file descriptors are compared before and after the load,
# and the run fails when they grew past hack/soak's bounds.
#
#   hack/soak.sh          # 10 minutes
#   hack/soak.sh 60s      # CI's short run
#   hack/soak.sh 30m --watchers 200
#
# Extra arguments go to hack/soak. Environment: PORT (plain HTTP port,
# default 18090).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10m}
shift || true
port=${PORT:-18090}
work=$(mktemp -d /tmp/soak.XXXXXX)
pid=
cleanup() {
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid" || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/miniapiserver" ./cmd/miniapiserver
go build -o "$work/soak" ./hack/soak
"$work/miniapiserver" --data-dir "$work/data" --secure-port 0 --insecure-port "$port" \
	--profiling --embedded-etcd-unsafe-no-fsync --log-level warn >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
	if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
	if ! kill -0 "$pid" 2>/dev/null; then cat "$work/server.log"; exit 1; fi
	sleep 0.1
done
"$work/soak" --server "http://127.0.0.1:$port" --duration "$duration" "$@"
