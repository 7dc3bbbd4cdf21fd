#!/usr/bin/env bash
# Kubernetes' own conformance suite on this server: runs the [Conformance]
# tests of e2e.test (k8s.io/kubernetes/test/e2e at the version
# hack/conformance/go.mod pins) on a cluster of miniapiserver, the real
# kube-controller-manager and kube-scheduler, and kwok simulating three
# nodes whose pods go Running (test/e2e's TestConformance starts it), and
# compares with the tests that pass on kube-apiserver in the same harness
# (hack/conformance-reference-pass.txt): it fails when one of those does not
# pass here. Tests that need real containers are never run
# (hack/conformance-skip.txt).
#
#   hack/conformance.sh sig-api-machinery        # one SIG's tests (what CI runs)
#   hack/conformance.sh                          # all of them
#   hack/conformance.sh -skip-serial -skip-slow sig-apps
#   hack/conformance.sh -reference sig-api-machinery          # on kube-apiserver v1.37.2
#   hack/conformance.sh -reference -record sig-api-machinery  # and write its passes into
#                                                             # the list (that SIG's lines)
#   hack/conformance.sh -procs 8 -passing        # on 8 processes, only the tests the
#                                                # list says pass on kube-apiserver
#   hack/conformance.sh -focus 'Sysctls.*invalid' # the [Conformance] tests whose names match
#
# Per-test results (PASS/FAIL, time, failure message) are printed at the
# end; the run's e2e.test log, Ginkgo JSON and JUnit reports and the
# cluster's logs stay in $CONFORMANCE_OUT (default a new /tmp/conformance.*).
#
# Environment: E2E_BIN (the components' cache folder, see
# hack/e2e-components.sh and hack/conformance-components.sh; cache it in
# CI), CONFORMANCE_TIMEOUT (the whole e2e.test run, default 3h),
# CONFORMANCE_OUT, PEER_BIN and REFERENCE_KUBE (for -reference, as
# hack/e2e.sh). GOMAXBUILD as the component scripts.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

reference="" record="" skips=() sig="" procs=1 passing="" narrow=""
while (($#)); do
	case $1 in
	-reference) reference=1 ;;
	-record) record=1 ;;
	-procs) procs=$2; shift ;;
	-passing) passing=1 ;;
	-focus) narrow=$2; shift ;;
	-skip-serial) skips+=('\[Serial\]') ;;
	-skip-slow) skips+=('\[Slow\]') ;;
	-*) echo "conformance: unknown flag $1" >&2; exit 2 ;;
	*) sig=$1 ;;
	esac
	shift
done
if [[ -n $record && -z $reference ]]; then
	echo "conformance: -record writes kube-apiserver's passes: use it with -reference" >&2
	exit 2
fi
if [[ -n $record && -n $passing ]]; then
	echo "conformance: -record would keep only what passed before: drop -passing" >&2
	exit 2
fi
if ! [[ $procs =~ ^[1-9][0-9]*$ ]]; then
	echo "conformance: -procs takes a number of processes" >&2
	exit 2
fi

# --ginkgo.focus: the [Conformance] tests, of one SIG when asked.
focus='\[Conformance\]'
if [[ -n $sig ]]; then
	sig=${sig#[} sig=${sig%]}
	focus="\\[$sig\\].*\\[Conformance\\]"
fi
# A name of the lists as a literal regular expression.
literal() { printf '%s' "$1" | sed 's/[][\.*^$(){}?+|/]/\\&/g'; }
# --ginkgo.skip: each line of the skip list (as a literal), and -skip-*.
while IFS= read -r line; do
	[[ -z $line || $line == \#* ]] && continue
	skips+=("$(literal "$line")")
done <"$root/hack/conformance-skip.txt"
skip=$(IFS='|'; echo "${skips[*]}")
# -passing: the focus narrowed to the reference list's names (of the SIG).
if [[ -n $passing ]]; then
	names=()
	while IFS= read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		[[ -n $sig && $line != "[$sig]"* ]] && continue
		[[ -n $narrow && ! $line =~ $narrow ]] && continue
		names+=("$(literal "$line")")
	done <"$root/hack/conformance-reference-pass.txt"
	if ((${#names[@]} == 0)); then
		echo "conformance: the reference list names no test of ${sig:-any SIG}${narrow:+ matching $narrow}" >&2
		exit 2
	fi
	focus="($(IFS='|'; echo "${names[*]}"))"
fi

# -focus: the tests whose names match it as well (with -passing, the
# list's names were filtered by it above).
if [[ -n $narrow && -z $passing ]]; then
	focus="(?:$focus)(?:.*)(?:$narrow)|(?:$narrow)(?:.*)(?:$focus)"
fi
start=$(date +%s)
E2E_BIN=$("$root/hack/e2e-components.sh")
E2E_BIN=$(E2E_BIN=$E2E_BIN "$root/hack/conformance-components.sh")
export E2E_BIN
echo "conformance: components ready in $(($(date +%s) - start)) s" >&2

P=${GOMAXBUILD:-$(nproc)}
out=${CONFORMANCE_OUT:-$(mktemp -d /tmp/conformance.XXXXXX)}
mkdir -p "$out"
server=kube-apiserver
if [[ -z $reference ]]; then
	server=miniapiserver
	(cd "$root" && go build -p "$P" -o "$out/miniapiserver" ./cmd/miniapiserver)
	export MINIAPISERVER=$out/miniapiserver
fi

# What TestConformance runs once the cluster is up ($KUBECONFIG its admin's).
# e2e.test exits 1 when a test fails; that is for the comparison below to
# judge, so the run fails only when e2e.test wrote no report.
timeout=${CONFORMANCE_TIMEOUT:-3h}
e2e_flags=(--kubeconfig='"$KUBECONFIG"' --provider=skeleton --report-dir=.)
ginkgo_flags=(--focus="$focus" --skip="$skip" --timeout="$timeout" --no-color --json-report=report.json)
if ((procs == 1)); then
	run_e2e="$(printf %q "$E2E_BIN/e2e.test") $(printf '%q ' "${ginkgo_flags[@]/#--/--ginkgo.}")${e2e_flags[*]}"
else
	# The ginkgo CLI runs the specs on $procs processes ([Serial] ones last,
	# on one) and merges their reports into one.
	run_e2e="$(printf %q "$E2E_BIN/ginkgo") run --procs=$procs $(printf '%q ' "${ginkgo_flags[@]}")"
	run_e2e+="$(printf %q "$E2E_BIN/e2e.test") -- ${e2e_flags[*]}"
fi
cat >"$out/run-e2e.sh" <<RUN
#!/usr/bin/env bash
set -o pipefail
cd $(printf %q "$out")
$run_e2e 2>&1 | tee e2e.log
echo "conformance: e2e.test exited \$? on \$CONFORMANCE_SERVER" >&2
cp "\$CONFORMANCE_CLUSTER_DIR"/*.log "\$CONFORMANCE_CLUSTER_DIR"/pki/logs/*.log . 2>/dev/null
[[ -s report.json ]]
RUN
chmod +x "$out/run-e2e.sh"
echo "conformance: on $server, focus $focus; results in $out" >&2

start=$(date +%s)
status=0
(cd "$root/test/e2e" && CONFORMANCE_RUN=$out/run-e2e.sh go test -p "$P" -count=1 -v -timeout 4h -run '^TestConformance$' . \
	${reference:+-reference}) || status=$?
echo "conformance: cluster and e2e.test ran in $(($(date +%s) - start)) s (exit $status)" >&2
if [[ ! -s $out/report.json ]]; then
	echo "conformance: e2e.test wrote no report ($out)" >&2
	exit 1
fi
(cd "$root/hack/conformance" && go run -p "$P" ./report -json "$out/report.json" -list "$root/hack/conformance-reference-pass.txt" \
	-focus "$focus" -skip "$skip" -server "$server" ${record:+-record}) || status=$?
exit "$status"
