#!/usr/bin/env bash
# Measures the cost of a create in a miniapiserver binary: starts it on a
# fresh data dir (embedded etcd, no fsync unless FSYNC=1), runs the bench
# tool's create scenario, and prints one line: the label, ops/s, p50 and
# p99 (ms), errors, and the server's CPU time per create (user + system
# of the whole process, embedded etcd included). CPU per create is the
# steadier figure on a shared machine, where ops/s follows the other load.
# With RAW_ETCD=1 it then runs raw-etcd's creates on the same etcd and
# adds their rate, the CPU per transaction and the ratio of the two rates
# (issue 13's "creates at N % of raw etcd's rate"); the raw scenario's
# GETs then run for 1 ms only, so that its CPU is the creates' (and one
# LIST's).
#
#   go build -o /tmp/mini-a ./cmd/miniapiserver      # one tree
#   go build -o /tmp/mini-b ./cmd/miniapiserver      # another
#   go build -o /tmp/bench ./hack/bench
#   for i in 1 2 3 4 5; do
#     hack/bench/create-cpu.sh /tmp/mini-a a 6000; hack/bench/create-cpu.sh /tmp/mini-b b 6000
#   done
#
# Environment: BENCH (the tool, default /tmp/bench), PORT (default 17445),
# OUT (the tool's JSON lines, default ./bench-results.jsonl), FSYNC=1
# (the embedded etcd fsyncs, as by default), RAW_ETCD=1, PROFILE=<seconds>
# (a CPU profile of the server from the start of the creates, kept as
# <label>.pprof in the current directory).
set -euo pipefail

bin=$1
label=$2
count=${3:-3000}
BENCH=${BENCH:-/tmp/bench}
PORT=${PORT:-17445}
OUT=${OUT:-$PWD/bench-results.jsonl}
dir=$(mktemp -d /tmp/create-cpu.XXXXXX)
flags=(--embedded-etcd-unsafe-no-fsync)
[[ ${FSYNC:-0} == 1 ]] && flags=()

"$bin" --data-dir "$dir/data" --secure-port "$PORT" --insecure-port 0 --profiling "${flags[@]}" >"$dir/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
	curl -sk "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
	sleep 0.1
done
sleep 1
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
if [[ -n ${PROFILE:-} ]]; then
	curl -skf -H "Authorization: Bearer $(cat "$dir/data/admin-token")" -o "$label.pprof" \
		"https://127.0.0.1:$PORT/debug/pprof/profile?seconds=$PROFILE" &
	profile_pid=$!
fi
before=$(ticks)
line=$("$BENCH" --server "https://127.0.0.1:$PORT" --token-file "$dir/data/admin-token" --insecure-skip-tls-verify \
	--scenario create --count "$count" --label "$label" --out "$OUT" 2>/dev/null | tail -1)
after=$(ticks)
[[ -n ${profile_pid:-} ]] && wait "$profile_pid"
raw='{}' raw_before=0 raw_after=0
if [[ ${RAW_ETCD:-0} == 1 ]]; then
	etcd_url=$(sed -n 's/.* etcd=\([^ ]*\).*/\1/p' "$dir/log" | head -1)
	raw_before=$(ticks)
	raw=$("$BENCH" --scenario raw-etcd --etcd-url "$etcd_url" --count "$count" --duration 1ms --repeats 1 \
		--label "$label-raw" --out "$OUT" 2>/dev/null | grep raw-etcd-create)
	raw_after=$(ticks)
fi
python3 - "$line" "$raw" <<PY
import json, sys
d, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = '$label %s %s %s %s cpu_ms_per_create=%.3f' % (d['ops_per_sec'], d['p50_ms'], d['p99_ms'], d['errors'],
    ($after - $before) * 1000.0 / $hz / $count)
if r:
    out += ' raw_etcd_ops=%.0f cpu_ms_per_txn=%.3f ratio=%.0f%%' % (r['ops_per_sec'],
        ($raw_after - $raw_before) * 1000.0 / $hz / $count, 100 * d['ops_per_sec'] / r['ops_per_sec'])
print(out)
PY
