#!/usr/bin/env bash
# Records the discovery of the reference kube-apiserver (default flags, as
# /work/shared/reference-kube/start-kube.sh runs it) into the golden files
# that test/integration/discovery compares this server's discovery with:
#
#   aggregated_api.json, aggregated_apis.json  /api and /apis as
#       apidiscovery.k8s.io/v2 APIGroupDiscoveryList (verbs, kinds, scope,
#       short names, categories, singular names, subresources)
#   legacy.json      every /api/v1 and /apis/<group>/<version> document
#       (APIResourceList, for storageVersionHash) keyed by its path
#   api-resources.txt  `kubectl api-resources -o wide` (columns as kubectl
#       prints them, sorted)
#   VERSION          `kube-apiserver --version`
#
#   hack/record-discovery.sh            # writes test/integration/discovery/testdata/kube
#
# Environment: PEER_BIN (reference binaries, default /tmp/peer/bin; build
# them with /work/shared/reference-kube/build.sh), REFERENCE_KUBE (that
# folder), OUT (output folder). The reference runs with its own state in a
# temporary folder and is stopped (by PID) on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REFERENCE_KUBE=${REFERENCE_KUBE:-/work/shared/reference-kube}
export PEER_BIN=${PEER_BIN:-/tmp/peer/bin}
OUT=${OUT:-$root/test/integration/discovery/testdata/kube}
export PEER_STATE
PEER_STATE=$(mktemp -d /tmp/peer-state-discovery.XXXXXX)

stop() {
	"$REFERENCE_KUBE/stop.sh" || true
	rm -rf "$PEER_STATE"
}
trap stop EXIT
eval "$("$REFERENCE_KUBE/start-kube.sh")"

get() { # path [accept]
	curl -sSfk -H "Authorization: Bearer $PEER_TOKEN" ${2:+-H "Accept: $2"} "$PEER_URL$1"
}
aggregated="application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

mkdir -p "$OUT"
"$PEER_BIN/kube-apiserver" --version > "$OUT/VERSION"
for p in api apis; do
	get "/$p" "$aggregated" | jq . > "$OUT/aggregated_$p.json"
done
# Every served group/version's legacy document, keyed by its path.
paths=(/api/v1 $(get /apis | jq -r '.groups[].versions[].groupVersion | "/apis/" + .'))
for p in "${paths[@]}"; do
	get "$p" | jq --arg path "$p" '{($path): .}'
done | jq -s add > "$OUT/legacy.json"
if command -v kubectl >/dev/null; then
	# kubectl's discovery cache is keyed by server: keep it out of $HOME.
	kubectl --cache-dir "$PEER_STATE/kubectl-cache" --server "$PEER_URL" --token "$PEER_TOKEN" \
		--insecure-skip-tls-verify api-resources -o wide --sort-by name > "$OUT/api-resources.txt"
fi
echo "recorded $(cat "$OUT/VERSION") discovery in $OUT" >&2
