#!/usr/bin/env bash
# Runs test/envtest/bench side by side on miniapiserver's envtest assets
# and on the real pair (kube-apiserver v1.37.2 and etcd's own main), the
# two alternated round by round in one run, so that both see the same
# machine: envtest Start+Stop (wall and CPU), a suite of 20 Start/Stop
# cycles, 100 CRDs installed until served.
#
#   hack/bench/envtest.sh [ROUNDS]      default 2; results in $OUT (stdout too)
#
# KUBE_APISERVER: the real kube-apiserver (default: the e2e cache's build,
# hack/e2e-components.sh). The real etcd is built from the main module's
# etcd version (go.etcd.io/etcd/server/v3). BENCHES selects benchmarks
# (default "StartStop Suite20 Install100CRDs").
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds="${1:-2}"
work="${WORK:-/tmp/envtest-bench}"
out="${OUT:-$work/results.txt}"
kube="${KUBE_APISERVER:-$HOME/.cache/miniapiserver-e2e/v1.37.2/kube-apiserver}"
benches="${BENCHES:-StartStop Suite20 Install100CRDs}"
[ -x "$kube" ] || { echo "hack/bench/envtest.sh: no kube-apiserver at $kube (set KUBE_APISERVER)" >&2; exit 2; }

mkdir -p "$work/mini" "$work/real"
go build -o "$work/miniapiserver" ./cmd/miniapiserver
"$work/miniapiserver" envtest-assets "$work/mini" >/dev/null
ln -sf "$kube" "$work/real/kube-apiserver"
go build -o "$work/real/etcd" go.etcd.io/etcd/server/v3
(cd test/envtest && go test -c -o "$work/bench.test" ./bench)

# benchtime per benchmark: a suite is 20 cycles already.
benchtime() {
  case "$1" in
    StartStop) echo 5x ;;
    *) echo 1x ;;
  esac
}

: > "$out"
for r in $(seq 1 "$rounds"); do
  for b in $benches; do
    for pair in mini real; do
      echo "== round $r $b $pair ($(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$out"
      ENVTEST_BENCH_ASSETS="$work/$pair" "$work/bench.test" -test.run '^$' \
        -test.bench "^Benchmark$b\$" -test.benchtime "$(benchtime "$b")" 2>&1 |
        grep -E '^Benchmark' | tee -a "$out"
    done
  done
done
