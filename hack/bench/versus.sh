#!/usr/bin/env bash
# Measures two builds of miniapiserver side by side, alternated on one
# machine, for "the figures do not regress" of a change that should not
# move them: fresh starts (ready_ms, and RSS 6 s after ready), then on
# servers without fsync, creates of COUNT 1 KiB ConfigMaps and LISTs of
# them (rv=0 and unset, JSON and protobuf) and the RSS after. Prints one
# row per figure with each build's values, in run order; the JSON lines
# go to OUT.
#
#   go build -trimpath -o /tmp/vs/base ./cmd/miniapiserver   # at the earlier commit
#   go build -trimpath -o /tmp/vs/new ./cmd/miniapiserver
#   hack/bench/versus.sh /tmp/vs/base /tmp/vs/new
#
# Environment: STARTS (fresh starts of each, default 3), PAIRS (create and
# LIST servers of each, default 2), COUNT (default 10000), OUT (default
# ./versus.jsonl), PORT (default 17600; each run uses the next port).
# Copy binaries before measuring them: one just written by the linker
# maps more of its pages at each fault than a copy (BENCHMARKS.md, Memory).
set -euo pipefail
base=$1 new=$2
STARTS=${STARTS:-3} PAIRS=${PAIRS:-2} COUNT=${COUNT:-10000}
OUT=${OUT:-$PWD/versus.jsonl}
port=${PORT:-17600}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d /tmp/versus.XXXXXX)
pid=
cleanup() {
	if [[ -n $pid ]]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; fi
	rm -rf "$work"
}
trap cleanup EXIT
(cd "$root" && go build -o "$work/bench" ./hack/bench)

start() { # BIN NAME RUN: a fresh start, ready_ms and RSS 6 s after ready
	port=$((port + 1))
	"$work/bench" --label "$2-$3-fresh" --server "https://127.0.0.1:$port" --scenario startup \
		--startup-idle 6s --cmd "$1 --data-dir $work/d-$2-$3 --secure-port $port" --out "$OUT" >/dev/null
}

load() { # BIN NAME RUN: creates and LISTs on a server without fsync
	port=$((port + 1))
	local dir=$work/l-$2-$3 server=https://127.0.0.1:$port
	"$1" --data-dir "$dir" --secure-port "$port" --embedded-etcd-unsafe-no-fsync >"$work/log" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		curl -skf "$server/readyz" >/dev/null && break
		sleep 0.1
	done
	local common=(--server "$server" --token-file "$dir/admin-token" --insecure-skip-tls-verify --out "$OUT")
	"$work/bench" "${common[@]}" --label "$2-$3-create" --scenario create --count "$COUNT" >/dev/null
	for pb in false true; do
		"$work/bench" "${common[@]}" --label "$2-$3-list-pb=$pb" --scenario list --count "$COUNT" \
			--repeats 10 --protobuf=$pb >/dev/null
	done
	"$work/bench" "${common[@]}" --label "$2-$3-memory" --scenario memory --pid "$pid" >/dev/null
	kill "$pid" && wait "$pid" 2>/dev/null || true
	pid=
}

for run in $(seq "$STARTS"); do
	start "$base" base "$run"
	start "$new" new "$run"
done
for run in $(seq "$PAIRS"); do
	load "$base" base "$run"
	load "$new" new "$run"
done

# One row a figure: each build's values in run order.
summary() { # FIGURE JQ-FILTER SUFFIX
	local b n
	b=$(jq -r --arg s "$3" "select(.params.label | test(\"^base-[0-9]+-\" + \$s + \"\$\")) | $2" "$OUT" | paste -sd, -)
	n=$(jq -r --arg s "$3" "select(.params.label | test(\"^new-[0-9]+-\" + \$s + \"\$\")) | $2" "$OUT" | paste -sd, -)
	printf '%-40s base %-28s new %s\n' "$1" "$b" "$n"
}
summary "ready, fresh (ms)" '.ready_ms | round' fresh
summary "RSS 6 s after ready (MiB)" '.rss_bytes / 1048576 * 10 | round / 10' fresh
summary "creates/s" '.ops_per_sec | round' create
summary "LIST rv=0 JSON p50 (ms)" '.rv0.p50_ms' 'list-pb=false'
summary "LIST rv=0 protobuf p50 (ms)" '.rv0.p50_ms' 'list-pb=true'
summary "LIST rv unset JSON p50 (ms)" '.rv_unset.p50_ms' 'list-pb=false'
summary "RSS after creates and LISTs (MiB)" '.rss_bytes / 1048576 * 10 | round / 10' memory
