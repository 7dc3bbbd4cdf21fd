#!/usr/bin/env bash
# controller-runtime's own envtest-backed test suites, unchanged, with this
# server as envtest's kube-apiserver and etcd: a check by a real client's
# suite rather than by ours.
#
#   hack/controller-runtime.sh                  # every package of the set
#   hack/controller-runtime.sh pkg/cache pkg/source
#   hack/controller-runtime.sh -reference       # the same on the real
#       kube-apiserver ($PEER_BIN/kube-apiserver, default /tmp/peer/bin;
#       build it with ../shared/reference-kube/build.sh), for comparison
#
# It fetches controller-runtime's module source (the version
# test/envtest/go.mod requires) through the Go module proxy into a writable
# copy under ${XDG_CACHE_HOME:-$HOME/.cache}/miniapiserver-controller-runtime,
# builds miniapiserver, writes envtest assets (`miniapiserver envtest-assets`)
# and runs `go test` on the packages with KUBEBUILDER_ASSETS there. With
# -reference, etcd is etcd v3.7.3's own main (go.etcd.io/etcd/server/v3),
# the version this server embeds.
#
# It prints each package's result and the specs that failed, and exits
# non-zero when a spec fails that hack/controller-runtime-known.txt does not
# list for that server (each entry says why), or a package fails without a
# failed spec (a build or setup failure).
#
# Environment: CR_TIMEOUT (go test -timeout per package, default 20m),
# CR_PARALLEL (go test -p, default 2: builds and suites two at a time; each
# suite starts its own control plane), CR_WORK (scratch
# folder, default a new temporary one, removed on exit).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The envtest-backed packages. pkg/client/apiutil is left out: one of its
# specs downloads an old kube-apiserver (aggregatedDiscovery=false), which
# fails without network access on kube too.
default_packages=(pkg/client pkg/cache pkg/builder pkg/controller pkg/internal/controller pkg/manager
  pkg/webhook pkg/envtest pkg/reconcile pkg/source pkg/handler pkg/cluster)

server=miniapiserver
packages=()
for arg in "$@"; do
  case $arg in
    -reference) server=kube-apiserver ;;
    pkg/*) packages+=("$arg") ;;
    *) echo "controller-runtime: unknown argument $arg" >&2; exit 2 ;;
  esac
done
[[ ${#packages[@]} -gt 0 ]] || packages=("${default_packages[@]}")

version=$(awk '$1 == "sigs.k8s.io/controller-runtime" {print $2}' "$root/test/envtest/go.mod")
cache=${XDG_CACHE_HOME:-$HOME/.cache}/miniapiserver-controller-runtime/$version
if [[ ! -f $cache/.complete ]]; then
  # The module cache's copy is read-only, and the suites write in their
  # package folders (reports, certificates): work in a copy.
  (cd "$root" && GOWORK=off go mod download "sigs.k8s.io/controller-runtime@$version")
  dir=$(go env GOMODCACHE)/sigs.k8s.io/controller-runtime@$version
  rm -rf "$cache" && mkdir -p "$cache"
  cp -R "$dir/." "$cache/src" && chmod -R u+w "$cache/src"
  (cd "$cache/src" && GOWORK=off go mod download)
  touch "$cache/.complete"
fi
src=$cache/src

work=${CR_WORK:-$(mktemp -d /tmp/controller-runtime.XXXXXX)}
# Some of controller-runtime's specs leave their control plane running
# (seen with the reference's kube-apiserver and etcd): whatever still runs
# from the assets folder is stopped on exit.
stop_leftovers() { pkill -f "^$work/assets/" 2>/dev/null || true; }
if [[ -n ${CR_WORK:-} ]]; then
  trap stop_leftovers EXIT
else
  trap 'stop_leftovers; rm -rf "$work"' EXIT
fi
(cd "$root" && go build -o "$work/miniapiserver" ./cmd/miniapiserver)
rm -rf "$work/assets"
"$work/miniapiserver" envtest-assets "$work/assets" >/dev/null
if [[ $server == kube-apiserver ]]; then
  kube=${PEER_BIN:-/tmp/peer/bin}/kube-apiserver
  if [[ ! -x $kube ]]; then
    echo "controller-runtime: no $kube: build it with ../shared/reference-kube/build.sh" >&2
    exit 2
  fi
  ln -sf "$kube" "$work/assets/kube-apiserver"
  # etcd v3.7.3's own main, with etcd's timing (BENCHMARKS.md, "envtest and
  # controller-runtime's suites").
  rm -f "$work/assets/etcd"
  (cd "$root" && go build -o "$work/assets/etcd" go.etcd.io/etcd/server/v3)
fi
export KUBEBUILDER_ASSETS=$work/assets

cd "$src"
for p in "${packages[@]}"; do rm -f "$p/ginkgo-report.json"; done
echo "controller-runtime $version on $server: ${packages[*]}" >&2
start=$(date +%s)
status=0
GOWORK=off go test -count=1 -p "${CR_PARALLEL:-2}" -timeout "${CR_TIMEOUT:-20m}" \
  $(printf './%s ' "${packages[@]}") -args -ginkgo.no-color -ginkgo.json-report=ginkgo-report.json \
  >"$work/go-test.log" 2>&1 || status=$?
elapsed=$(($(date +%s) - start))
grep -E '^(ok|FAIL|---|panic:)' "$work/go-test.log" | grep -v -- '--- PASS' >&2 || true

# Every failed spec, as "package<TAB>spec text" (its containers and leaf,
# space separated; a failed BeforeSuite has the leaf type as its text), and
# the count of passed specs.
python3 - "$work" "${packages[@]}" <<'PY'
import json, os, re, sys
work, packages = sys.argv[1], sys.argv[2:]
log = open(os.path.join(work, "go-test.log"), errors="replace").read()
passed, failed = 0, []
for p in packages:
    report = os.path.join(p, "ginkgo-report.json")
    if not os.path.exists(report):
        if not re.search(r"^ok\s+sigs.k8s.io/controller-runtime/%s\s" % re.escape(p), log, re.M):
            failed.append((p, "(no report: the package did not build or run)"))
        continue
    for suite in json.load(open(report)):
        for spec in suite.get("SpecReports") or []:
            if spec["State"] == "passed":
                passed += spec["LeafNodeType"] == "It"
            elif spec["State"] not in ("skipped", "pending"):
                text = (spec.get("ContainerHierarchyTexts") or []) + [spec["LeafNodeText"] or spec["LeafNodeType"]]
                failed.append((p, " ".join(text)))
with open(os.path.join(work, "failed"), "w") as f:
    for p, text in failed:
        f.write("%s\t%s\n" % (p, text))
open(os.path.join(work, "passed"), "w").write(str(passed))
PY

# Known differences: "server | package | spec text | why" (server is
# miniapiserver, kube-apiserver or both).
known=$root/hack/controller-runtime-known.txt
unexpected=0
while IFS=$'\t' read -r p spec; do
  if awk -F' [|] ' -v s="$server" -v p="$p" -v t="$spec" \
    '!/^#/ && NF >= 4 && ($1 == s || $1 == "both") && $2 == p && $3 == t {found = 1} END {exit !found}' "$known"; then
    echo "known:      $p: $spec" >&2
  else
    echo "UNEXPECTED: $p: $spec" >&2
    unexpected=$((unexpected + 1))
  fi
done <"$work/failed"

passed=$(cat "$work/passed")
failed=$(wc -l <"$work/failed")
echo "controller-runtime $version on $server: $passed specs passed, $failed failed ($unexpected not known), go test exit $status, ${elapsed} s" >&2
echo "$passed passed, $failed failed"
[[ $unexpected -eq 0 ]]
