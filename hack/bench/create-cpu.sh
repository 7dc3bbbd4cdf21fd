#!/usr/bin/env bash
# Measures the cost of a create in a miniapiserver binary: starts it on a
# fresh data dir (embedded etcd, no fsync), runs the bench tool's create
# scenario, and prints one line: the label, ops/s, p50 and p99 (ms), errors,
# and the server's CPU time per create (user + system of the whole process,
# embedded etcd included). CPU per create is the steadier figure on a
# shared machine, where ops/s follows the other load.
#
#   go build -o /tmp/mini-a ./cmd/miniapiserver      # one tree
#   go build -o /tmp/mini-b ./cmd/miniapiserver      # another
#   go build -o /tmp/bench ./hack/bench
#   for i in 1 2 3 4 5; do
#     hack/bench/create-cpu.sh /tmp/mini-a a 6000; hack/bench/create-cpu.sh /tmp/mini-b b 6000
#   done
#
# Environment: BENCH (the tool, default /tmp/bench), PORT (default 17445),
# OUT (the tool's JSON lines, default ./bench-results.jsonl).
set -euo pipefail

bin=$1
label=$2
count=${3:-3000}
BENCH=${BENCH:-/tmp/bench}
PORT=${PORT:-17445}
OUT=${OUT:-$PWD/bench-results.jsonl}
dir=$(mktemp -d /tmp/create-cpu.XXXXXX)

"$bin" --data-dir "$dir/data" --secure-port "$PORT" --insecure-port 0 --embedded-etcd-unsafe-no-fsync >"$dir/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
	curl -sk "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
	sleep 0.1
done
sleep 1
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
line=$("$BENCH" --server "https://127.0.0.1:$PORT" --token-file "$dir/data/admin-token" --insecure-skip-tls-verify \
	--scenario create --count "$count" --label "$label" --out "$OUT" 2>/dev/null | tail -1)
after=$(ticks)
echo "$line" | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
cpu_ms = ($after - $before) * 1000.0 / $hz / $count
print('$label', d['ops_per_sec'], d['p50_ms'], d['p99_ms'], d['errors'], 'cpu_ms_per_create=%.3f' % cpu_ms)"
