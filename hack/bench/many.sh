#!/usr/bin/env bash
# Measures the memory of N idle miniapiservers on one machine, each with
# its embedded etcd, its own data dir (under a temporary dir) and port:
# starts them BATCH at a time (each batch waits for /readyz), waits IDLE
# seconds, prints each one's /proc/PID/smaps_rollup figures (RSS, PSS,
# USS = Private_Clean + Private_Dirty, anonymous, shared clean, PSS of
# file pages; MiB) and the mean, then stops every instance it started.
#
#   cp miniapiserver /tmp/mini && hack/bench/many.sh /tmp/mini 10
#   IDLE=20 BATCH=5 hack/bench/many.sh /tmp/mini 50
#
# Copy the binary first: a binary just written by the linker maps more of
# its pages at each fault than a copy (see BENCHMARKS.md,
# "Memory"). Environment: IDLE (default 30), BATCH (default 1), BASEPORT
# (default 17000; instance i serves on BASEPORT+i).
set -u
bin=$1; n=$2; idle=${IDLE:-30}; base=${BASEPORT:-17000}; batch=${BATCH:-1}
root=$(mktemp -d /tmp/many-instances.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$root"' EXIT
t0=$(date +%s)
for i in $(seq 1 "$n"); do
	"$bin" --data-dir "$root/d$i" --secure-port $((base + i)) >"$root/log$i" 2>&1 &
	pids+=($!)
	if [ $((i % batch)) -eq 0 ] || [ "$i" -eq "$n" ]; then
		for j in $(seq $((i - (i - 1) % batch)) "$i"); do
			for _ in $(seq 900); do
				[ "$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$((base + j))/readyz")" = 200 ] && break
				sleep 0.1
			done
		done
	fi
done
echo "started $n in $(($(date +%s) - t0)) s; idle $idle s"
sleep "$idle"
printf "%-6s %8s %8s %8s %8s %9s %8s\n" inst rss pss uss anon shared_cl pss_file
for i in $(seq 1 "$n"); do
	awk -v i="$i" '/^Rss:/{r=$2} /^Pss:/{p=$2} /^Pss_File:/{pf=$2} /^Private_Clean:/{pc=$2} /^Private_Dirty:/{pd=$2} /^Anonymous:/{a=$2} /^Shared_Clean:/{sc=$2}
		END {printf "%-6s %8.1f %8.1f %8.1f %8.1f %9.1f %8.1f\n", i, r/1024, p/1024, (pc+pd)/1024, a/1024, sc/1024, pf/1024}' "/proc/${pids[$((i - 1))]}/smaps_rollup"
done >"$root/table"
cat "$root/table"
awk '{r+=$2; p+=$3; u+=$4; a+=$5; s+=$6; f+=$7; k++} END {printf "mean   %8.1f %8.1f %8.1f %8.1f %9.1f %8.1f   (%d instances; sum of PSS %.0f MiB)\n", r/k, p/k, u/k, a/k, s/k, f/k, k, p}' "$root/table"
du -sh "$root/d1" | awk '{print "data dir of one instance: " $1}'
