#!/usr/bin/env bash
# Times LISTs of 10,000 ConfigMaps in JSON and in protobuf (the bench
# tool's list scenario, --protobuf false then true) on a miniapiserver
# binary (fresh data dir, embedded etcd without fsync) or, with "kube" as
# the binary, on the reference kube-apiserver started by
# /work/shared/reference-kube/start-kube.sh (its export lines in
# $PEER_ENV). Prints the p50 and p99 of each kind of LIST, and the
# server's RSS after (miniapiserver only). Run both in one go to compare:
#
#   PEER_STATE=/tmp/peer/state-me /work/shared/reference-kube/start-kube.sh > /tmp/peer.env
#   for i in 1 2; do
#     PEER_ENV=/tmp/peer.env hack/bench/list-compare.sh kube kube-$i
#     hack/bench/list-compare.sh /tmp/mini mini-$i
#   done
#
# Environment: BENCH (default /tmp/bench), PORT (default 17471), OUT
# (default ./bench-results.jsonl), REPEATS (default 10), PEER_ENV.
set -euo pipefail

bin=$1
label=$2
BENCH=${BENCH:-/tmp/bench}
OUT=${OUT:-$PWD/bench-results.jsonl}
dir=$(mktemp -d /tmp/list-compare.XXXXXX)
pid=
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; [[ -n $pid ]] && wait $pid 2>/dev/null; rm -rf "$dir"' EXIT

if [[ $bin == kube ]]; then
	# shellcheck disable=SC1090 # the reference's export lines
	source "$PEER_ENV"
	printf %s "$PEER_TOKEN" >"$dir/token"
	common=(--server "$PEER_URL" --token-file "$dir/token" --insecure-skip-tls-verify --namespace bench-tool)
else
	PORT=${PORT:-17471}
	"$bin" --data-dir "$dir/data" --secure-port "$PORT" --embedded-etcd-unsafe-no-fsync >"$dir/log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		curl -skf "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	common=(--server "https://127.0.0.1:$PORT" --token-file "$dir/data/admin-token" --insecure-skip-tls-verify)
fi
"$BENCH" "${common[@]}" --scenario create --count 10000 >/dev/null
for pb in false true; do
	"$BENCH" "${common[@]}" --label "$label" --scenario list --repeats "${REPEATS:-10}" --protobuf=$pb --out "$OUT" |
		python3 -c "
import json, sys
d = json.loads(sys.stdin.readline())
print('$label protobuf=$pb', ' '.join('%s p50 %.1f p99 %.1f mismatches %d' % (k, d[k]['p50_ms'], d[k]['p99_ms'], d[k]['count_mismatches'])
      for k in ('rv0', 'rv_unset', 'paginated', 'selector_bucket_7')), 'bytes', d['rv0']['bytes'])"
done
if [[ -n $pid ]]; then
	echo "$label rss_kb $(awk '/VmRSS/{print $2}' "/proc/$pid/status")"
fi
