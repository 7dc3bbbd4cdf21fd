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
# and runs `go test` on the packages with KUBEBUILDER_ASSETS there. Both
# servers use this binary as etcd (etcd's own main, v3.7.3, as the
# reference's etcd harness).
#
# It prints each package's result and the specs that failed, and exits
# non-zero when a spec fails that hack/controller-runtime-known.txt does not
# list for that server (each entry says why), or a package fails without a
# failed spec (a build or setup failure).
#
# Environment: CR_TIMEOUT (go test -timeout per package, default 20m),
# CR_PARALLEL (go test -p, default 1: the suites start a control plane
# each, and time-sensitive specs flake on a busy machine), CR_WORK (scratch
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
  dir=$(cd "$root" && GOWORK=off go mod download -json "sigs.k8s.io/controller-runtime@$version" | jq -r .Dir)
  rm -rf "$cache" && mkdir -p "$cache"
  cp -R "$dir/." "$cache/src" && chmod -R u+w "$cache/src"
  (cd "$cache/src" && GOWORK=off go mod download)
  touch "$cache/.complete"
fi
src=$cache/src

work=${CR_WORK:-$(mktemp -d /tmp/controller-runtime.XXXXXX)}
[[ -n ${CR_WORK:-} ]] || trap 'rm -rf "$work"' EXIT
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
fi
export KUBEBUILDER_ASSETS=$work/assets

cd "$src"
for p in "${packages[@]}"; do rm -f "$p/ginkgo-report.json"; done
echo "controller-runtime $version on $server: ${packages[*]}" >&2
start=$(date +%s)
status=0
GOWORK=off go test -count=1 -p "${CR_PARALLEL:-1}" -timeout "${CR_TIMEOUT:-20m}" \
  $(printf './%s ' "${packages[@]}") -args -ginkgo.json-report=ginkgo-report.json \
  >"$work/go-test.log" 2>&1 || status=$?
elapsed=$(($(date +%s) - start))
grep -E '^(ok|FAIL|---|panic:)' "$work/go-test.log" | grep -v -- '--- PASS' >&2 || true

# Every failed spec, as "package<TAB>spec text" (its containers and leaf,
# space separated; a failed BeforeSuite has the leaf type as its text).
: >"$work/failed"
for p in "${packages[@]}"; do
  report=$p/ginkgo-report.json
  if [[ ! -f $report ]]; then
    if ! grep -qE "^ok +sigs.k8s.io/controller-runtime/$p\b" "$work/go-test.log"; then
      printf '%s\t%s\n' "$p" "(no report: the package did not build or run)" >>"$work/failed"
    fi
    continue
  fi
  jq -r --arg p "$p" '.[].SpecReports[]
    | select(.State != "passed" and .State != "skipped" and .State != "pending")
    | [$p, ((.ContainerHierarchyTexts // []) + [if .LeafNodeText == "" then .LeafNodeType else .LeafNodeText end] | join(" "))]
    | @tsv' "$report" >>"$work/failed"
done

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

passed=$(for p in "${packages[@]}"; do
  [[ ! -f $p/ginkgo-report.json ]] || jq '[.[].SpecReports[] | select(.LeafNodeType == "It" and .State == "passed")] | length' "$p/ginkgo-report.json"
done | awk '{n += $1} END {print n + 0}')
failed=$(wc -l <"$work/failed")
echo "controller-runtime $version on $server: $passed specs passed, $failed failed ($unexpected not known), go test exit $status, ${elapsed} s" >&2
echo "$passed passed, $failed failed"
[[ $unexpected -eq 0 ]]
