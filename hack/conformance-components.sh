#!/usr/bin/env bash
# Builds what hack/conformance.sh runs besides the servers: Kubernetes'
# e2e.test (k8s.io/kubernetes/test/e2e compiled with `go test -c`, at the
# version hack/conformance/go.mod pins), the ginkgo CLI that runs it on
# several processes, and kwok (sigs.k8s.io/kwok/cmd/kwok
# at $KWOK_VERSION), both from the Go module proxy, into the same cache
# folder as hack/e2e-components.sh (kube-controller-manager, kube-scheduler),
# reused when it already holds binaries of those versions. Prints the folder
# on stdout (progress on stderr). It also writes kwok's default stages
# there (kwok-stages.yaml), for kwok's --config:
#
#   E2E_BIN=$(hack/conformance-components.sh)
#
# Environment:
#   E2E_BIN       output folder; default $XDG_CACHE_HOME/miniapiserver-e2e/<version>
#                 ($HOME/.cache without XDG_CACHE_HOME): a path CI can cache
#   GOMAXBUILD    parallel compile jobs (go build -p), default nproc
#   KWOK_VERSION  default v0.8.0
#
# Release-like builds, as hack/e2e-components.sh: CGO_ENABLED=0, -trimpath,
# -ldflags "-s -w" and the version stamps. kwok is built by `go install
# module@version`, so with its own go.mod (its own k8s.io dependencies), as
# its release is; e2e.test needs test-only imports, hence its own module in
# hack/conformance (it requires k8s.io/kubernetes as test/e2e does).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root/hack/conformance"

KVER=$(go list -m -f '{{.Version}}' k8s.io/kubernetes) # e.g. v1.37.2
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
E2E_BIN=${E2E_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/miniapiserver-e2e/$KVER}
P=${GOMAXBUILD:-$(nproc)}
MAJOR=$(echo "${KVER#v}" | cut -d. -f1)
MINOR=$(echo "${KVER#v}" | cut -d. -f2)
VPKG=k8s.io/component-base/version
LDF="-s -w -X $VPKG.gitVersion=$KVER -X $VPKG.gitMajor=$MAJOR -X $VPKG.gitMinor=$MINOR"
LDF="$LDF -X $VPKG.gitTreeState=clean -X $VPKG.gitCommit=module-proxy-$KVER"
LDF="$LDF -X $VPKG.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
mkdir -p "$E2E_BIN"

if [[ $("$E2E_BIN/e2e.test" --version 2>/dev/null) == "$KVER" ]]; then
	echo "conformance-components: e2e.test $KVER cached in $E2E_BIN" >&2
else
	echo "conformance-components: building e2e.test $KVER -> $E2E_BIN (go test -c -p $P)" >&2
	start=$(date +%s)
	# Into a temporary name first: an interrupted build never looks cached.
	CGO_ENABLED=0 go test -c -p "$P" -trimpath -ldflags "$LDF" -o "$E2E_BIN/e2e.test.partial" k8s.io/kubernetes/test/e2e
	mv "$E2E_BIN/e2e.test.partial" "$E2E_BIN/e2e.test"
	echo "conformance-components: e2e.test built in $(($(date +%s) - start)) s" >&2
fi

# The ginkgo CLI (the version e2e.test links, a tool of hack/conformance's
# go.mod) runs e2e.test's specs on several processes (hack/conformance.sh
# -procs): most of a spec's time is waiting on the cluster.
GINKGO_VERSION=$(go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)
if [[ $("$E2E_BIN/ginkgo" version 2>/dev/null) == "Ginkgo Version ${GINKGO_VERSION#v}" ]]; then
	echo "conformance-components: ginkgo $GINKGO_VERSION cached in $E2E_BIN" >&2
else
	echo "conformance-components: building ginkgo $GINKGO_VERSION -> $E2E_BIN" >&2
	CGO_ENABLED=0 go build -p "$P" -trimpath -ldflags "-s -w" -o "$E2E_BIN/ginkgo.partial" github.com/onsi/ginkgo/v2/ginkgo
	mv "$E2E_BIN/ginkgo.partial" "$E2E_BIN/ginkgo"
fi

# kwok --version prints "kwok version v0.8.0 go1.x (linux/amd64)".
if [[ $("$E2E_BIN/kwok" --version 2>/dev/null) == *"version $KWOK_VERSION "* ]]; then
	echo "conformance-components: kwok $KWOK_VERSION cached in $E2E_BIN" >&2
else
	echo "conformance-components: building kwok $KWOK_VERSION -> $E2E_BIN (go install -p $P)" >&2
	start=$(date +%s)
	gobin=$(mktemp -d)
	trap 'rm -rf "$gobin"' EXIT
	# Outside any module: `go install module@version` uses kwok's go.mod.
	(cd "$gobin" && CGO_ENABLED=0 GOBIN="$gobin" go install -p "$P" -trimpath \
		-ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
		"sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION")
	mv "$gobin/kwok" "$E2E_BIN/kwok"
	echo "conformance-components: kwok built in $(($(date +%s) - start)) s" >&2
fi
# kwok's default stages, as kwokctl runs kwok (node-initialize, node
# heartbeat with Lease, pod ready/complete/delete), from the same module.
stages=$E2E_BIN/kwok-stages-$KWOK_VERSION.yaml
if [[ ! -s $stages ]]; then
	kdir=$(cd "${TMPDIR:-/tmp}" && go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		echo "---"
		cat "$kdir/kustomize/stage/$f"
	done > "$stages.partial"
	mv "$stages.partial" "$stages"
fi
ln -sf "$(basename "$stages")" "$E2E_BIN/kwok-stages.yaml"
echo "$E2E_BIN"
