#!/usr/bin/env bash
# Builds the kube-controller-manager and kube-scheduler the cluster test
# (test/e2e) runs, and the kube-apiserver the swap test (test/e2e,
# TestSwap) swaps with miniapiserver, from the Go module proxy, at the
# version test/e2e/go.mod pins (k8s.io/kubernetes), into a cache folder
# reused when it already holds binaries of that version. Prints the
# folder on stdout (progress on stderr):
#
#   E2E_BIN=$(hack/e2e-components.sh)
#
# Environment:
#   E2E_BIN     output folder; default $XDG_CACHE_HOME/miniapiserver-e2e/<version>
#               ($HOME/.cache without XDG_CACHE_HOME): a path CI can cache
#   GOMAXBUILD  parallel compile jobs (go build -p), default nproc
#   E2E_COMPONENTS  which to build, default all three; hack/e2e.sh asks
#               for the two the cluster test runs, so that it does not
#               wait for kube-apiserver's build
#
# Release-like build, as kube's hack/lib/golang.sh (and
# /work/shared/reference-kube/build.sh): CGO_ENABLED=0, -trimpath,
# -ldflags "-s -w" and the component-base version stamps, so that
# `--version` says the release.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root/test/e2e"

KVER=$(go list -m -f '{{.Version}}' k8s.io/kubernetes) # e.g. v1.37.2
E2E_BIN=${E2E_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/miniapiserver-e2e/$KVER}
P=${GOMAXBUILD:-$(nproc)}
MAJOR=$(echo "${KVER#v}" | cut -d. -f1)
MINOR=$(echo "${KVER#v}" | cut -d. -f2)
VPKG=k8s.io/component-base/version
LDF="-s -w -X $VPKG.gitVersion=$KVER -X $VPKG.gitMajor=$MAJOR -X $VPKG.gitMinor=$MINOR"
LDF="$LDF -X $VPKG.gitTreeState=clean -X $VPKG.gitCommit=module-proxy-$KVER"
LDF="$LDF -X $VPKG.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"

mkdir -p "$E2E_BIN"
for comp in ${E2E_COMPONENTS:-kube-controller-manager kube-scheduler kube-apiserver}; do
	if [[ $("$E2E_BIN/$comp" --version 2>/dev/null) == "Kubernetes $KVER" ]]; then
		echo "e2e-components: $comp $KVER cached in $E2E_BIN" >&2
		continue
	fi
	echo "e2e-components: building $comp $KVER -> $E2E_BIN (go build -p $P)" >&2
	start=$(date +%s)
	# Into a temporary name first: an interrupted build never looks cached.
	CGO_ENABLED=0 go build -p "$P" -trimpath -ldflags "$LDF" -o "$E2E_BIN/$comp.partial" "k8s.io/kubernetes/cmd/$comp"
	mv "$E2E_BIN/$comp.partial" "$E2E_BIN/$comp"
	echo "e2e-components: $comp built in $(($(date +%s) - start)) s" >&2
done
echo "$E2E_BIN"
