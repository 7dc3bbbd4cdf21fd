#!/usr/bin/env bash
# Profiles miniapiserver under one scenario of the bench tool: builds the
# server and the tool from this tree, starts the server with --profiling on
# a fresh data dir, fills it (the create scenario, unprofiled) unless the
# scenario is create, then runs the scenario while taking a CPU profile of
# the server. Prints the CPU seconds the server and the tool each used
# during the scenario (they share the machine's cores), and the profile's
# top entries; keeps the profile and the tool's JSON line in $KEEP_DIR.
#
#   hack/bench/profile.sh create
#   hack/bench/profile.sh list
#   hack/bench/profile.sh watch --watchers 1000 --updates 1000
#
# Extra arguments are bench tool flags. Environment: PORT (default 16470),
# SECONDS_PROFILED (default 10), SERVER_FLAGS (extra miniapiserver flags),
# KEEP_DIR (default /tmp/bench-profile), TOP (pprof -top lines, default 30).
set -euo pipefail

scenario=$1
shift
PORT=${PORT:-16470}
KEEP_DIR=${KEEP_DIR:-/tmp/bench-profile}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d /tmp/bench-profile.XXXXXX)
server=https://127.0.0.1:$PORT
mkdir -p "$KEEP_DIR"

(cd "$root" && go build -o "$work/miniapiserver" ./cmd/miniapiserver && go build -o "$work/bench" ./hack/bench)
# shellcheck disable=SC2086 # SERVER_FLAGS is a list of flags
"$work/miniapiserver" --data-dir "$work/data" --secure-port "$PORT" --profiling ${SERVER_FLAGS:-} >"$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 300); do
	curl -skf "$server/readyz" >/dev/null && break
	sleep 0.1
done
token=$(cat "$work/data/admin-token")
common=(--server "$server" --token-file "$work/data/admin-token" --ca-file "$work/data/pki/apiserver.crt")
if [[ $scenario != create ]]; then
	"$work/bench" "${common[@]}" --scenario create "$@" >/dev/null
fi

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
profile=$KEEP_DIR/$scenario.pprof
curl -skf -H "Authorization: Bearer $token" -o "$profile" \
	"$server/debug/pprof/profile?seconds=${SECONDS_PROFILED:-10}" &
curl_pid=$!
server_before=$(ticks $pid)
"$work/bench" "${common[@]}" --scenario "$scenario" --label "profile-$scenario" --out "$KEEP_DIR/$scenario.jsonl" "$@" >/dev/null &
bench_pid=$!
bench_ticks=0
# The tool's own CPU time, read until it exits.
while kill -0 $bench_pid 2>/dev/null; do
	t=$(ticks $bench_pid 2>/dev/null || echo "$bench_ticks")
	bench_ticks=$t
	sleep 0.2
done
wait $bench_pid
server_after=$(ticks $pid)
wait $curl_pid
awk -v s=$((server_after - server_before)) -v b=$bench_ticks -v hz="$hz" -v sc="$scenario" \
	'BEGIN { printf "scenario %s: server CPU %.1f s, bench tool CPU %.1f s (to its last sample)\n", sc, s / hz, b / hz }'
tail -1 "$KEEP_DIR/$scenario.jsonl"
go tool pprof -top -nodecount "${TOP:-30}" "$work/miniapiserver" "$profile" 2>/dev/null | sed -n '1,40p'
