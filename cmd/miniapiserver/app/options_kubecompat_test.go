package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// validateArgs parses args with the command's flags and validates them.
func validateArgs(args ...string) error {
	o := NewOptions()
	fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	return o.Validate()
}

// kubeFlagsValidateTests are kube's flags, each valid or refused with
// the error named.
var kubeFlagsValidateTests = []struct {
	name      string
	args      []string
	wantError string // "": valid
}{
	// --feature-gates
	{name: "gate at its default", args: []string{"--feature-gates=ClusterTrustBundle=true,AllAlpha=false"}},
	{name: "gate with kube's component prefix", args: []string{"--feature-gates=kube:ClusterTrustBundle=true"}},
	{name: "gate of another component", args: []string{"--feature-gates=wardle:Foo=true"}, wantError: "component not registered: wardle"},
	{name: "unknown gate", args: []string{"--feature-gates=NoSuchGate=true"}, wantError: "unrecognized feature gate: NoSuchGate"},
	{name: "gate without a value", args: []string{"--feature-gates=ClusterTrustBundle"}, wantError: "missing bool value for ClusterTrustBundle"},
	{name: "locked gate", args: []string{"--feature-gates=InPlacePodVerticalScaling=false"},
		wantError: "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"},
	{name: "gate away from its default", args: []string{"--feature-gates=ClusterTrustBundle=false"},
		wantError: "--feature-gates: ClusterTrustBundle=false: not supported by miniapiserver"},
	{name: "gate off as this server is", args: []string{"--feature-gates=ComponentFlagz=false,ComponentStatusz=false"}},
	{name: "all alpha gates", args: []string{"--feature-gates=AllAlpha=true"}, wantError: "--feature-gates: AllAlpha=true: not supported by miniapiserver"},
	// --runtime-config
	{name: "runtime-config off", args: []string{"--runtime-config=api/all=false,v1=true,apps/v1=true,api/legacy=false", "--enable-priority-and-fairness=false"}},
	{name: "runtime-config only api/all=false", args: []string{"--runtime-config=api/all=false"}, wantError: "invalid runtime-config with only api/all=false"},
	{name: "runtime-config unknown group", args: []string{"--runtime-config=example.com/v1=true"}, wantError: "--runtime-config: unknown api groups example.com/v1"},
	{name: "runtime-config api/beta on", args: []string{"--runtime-config=api/beta=true"}, wantError: "--runtime-config: api/beta=true: not supported by miniapiserver"},
	{name: "runtime-config bad value", args: []string{"--runtime-config=apps/v1=maybe"}, wantError: "invalid value of apps/v1: maybe"},
	{name: "runtime-config bad key", args: []string{"--runtime-config=apps=false"}, wantError: "runtime-config invalid key apps"},
	{name: "runtime-config upper-case resource", args: []string{"--runtime-config=apps/v1/Deployments=false"}, wantError: "resource is always lowercase plural"},
	{name: "runtime-config flow control off with APF", args: []string{"--runtime-config=flowcontrol.apiserver.k8s.io/v1=false"},
		wantError: "--runtime-config=flowcontrol.apiserver.k8s.io/v1=false conflicts with --enable-priority-and-fairness=true"},
	// the others
	{name: "node port range", args: []string{"--service-node-port-range=30000-30100"}},
	{name: "bad node port range", args: []string{"--service-node-port-range=30100-"}, wantError: "invalid argument"},
	{name: "goaway chance", args: []string{"--goaway-chance=0.001"}},
	{name: "goaway chance too high", args: []string{"--goaway-chance=0.5"}, wantError: "--goaway-chance can not be less than 0 or greater than 0.02"},
	{name: "storage backend etcd3", args: []string{"--storage-backend=etcd3"}},
	{name: "storage backend other", args: []string{"--storage-backend=etcd2"}, wantError: `--storage-backend: "etcd2" is not etcd3`},
	{name: "apiserver count 1", args: []string{"--apiserver-count=1"}},
	{name: "apiserver count 3", args: []string{"--apiserver-count=3", "--endpoint-reconciler-type=master-count"}},
	{name: "apiserver count 0", args: []string{"--apiserver-count=0"}, wantError: "--apiserver-count should be a positive number, but value '0' provided"},
	{name: "unknown reconciler", args: []string{"--endpoint-reconciler-type=count"}, wantError: `--endpoint-reconciler-type: "count" is not one of lease, master-count, none`},
	{name: "service family not the advertised one", args: []string{"--advertise-address=192.168.0.10", "--service-cluster-ip-range=fd00::/108"},
		wantError: `service IP family "fd00::/108" must match public address family "192.168.0.10"`},
	{name: "service family without endpoints", args: []string{"--advertise-address=192.168.0.10", "--service-cluster-ip-range=fd00::/108", "--endpoint-reconciler-type=none"}},
	{name: "dual-stack service range", args: []string{"--service-cluster-ip-range=10.96.0.0/12,fd00::/108"}},
	{name: "dual-stack, IPv6 primary", args: []string{"--service-cluster-ip-range=fd00::/108,10.96.0.0/12"}},
	{name: "two ranges of one family", args: []string{"--service-cluster-ip-range=10.96.0.0/12,10.112.0.0/12"},
		wantError: "--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family"},
	{name: "three ranges", args: []string{"--service-cluster-ip-range=10.96.0.0/12,fd00::/108,fd01::/108"},
		wantError: "--service-cluster-ip-range must not contain more than two entries"},
	{name: "min-request-timeout in seconds", args: []string{"--min-request-timeout=1800"}},
	{name: "min-request-timeout 0", args: []string{"--min-request-timeout=0"}},
	{name: "min-request-timeout negative", args: []string{"--min-request-timeout=-1"}, wantError: "--min-request-timeout can not be negative value"},
	// refused flags: at kube's default accepted, else refused naming them
	{name: "refused flag at kube's default", args: []string{"--delete-collection-workers=1", "--cors-allowed-origins=", "--disable-http2-serving=false", "--livez-grace-period=0s"}},
	{name: "refused bool alone", args: []string{"--enable-logs-handler"}, wantError: "--enable-logs-handler: not supported by miniapiserver: /logs is not served"},
	// kube's flags of smaller parts
	{name: "tls settings", args: []string{"--tls-min-version=VersionTLS13", "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "--tls-curve-preferences=29,23"}},
	{name: "unknown tls version", args: []string{"--tls-min-version=VersionTLS14"}, wantError: `--tls-min-version: unknown tls version "VersionTLS14"`},
	{name: "unknown cipher suite", args: []string{"--tls-cipher-suites=TLS_NULL"}, wantError: "--tls-cipher-suites: Cipher suite TLS_NULL not supported or doesn't exist"},
	{name: "unknown curve", args: []string{"--tls-curve-preferences=7"}, wantError: "--tls-curve-preferences: 7 is not a key exchange"},
	{name: "admission-control empty", args: []string{"--admission-control="}},
	{name: "admission-control and enable", args: []string{"--admission-control=NamespaceLifecycle", "--enable-admission-plugins=NodeRestriction"},
		wantError: "admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive"},
	{name: "admission-control unknown", args: []string{"--admission-control=Nope"}, wantError: `--admission-control: plugin "Nope" is unknown`},
	{name: "admission-control opt-in plugin", args: []string{"--admission-control=NamespaceLifecycle,AlwaysPullImages"}},
	{name: "audit log modes", args: []string{"--audit-log-mode=blocking"}},
	{name: "audit log strict", args: []string{"--audit-log-mode=blocking-strict"}, wantError: "--audit-log-mode: blocking-strict: not supported by miniapiserver"},
	{name: "audit log mode unknown", args: []string{"--audit-log-mode=later"}, wantError: "invalid audit log mode later"},
	{name: "lease reuse", args: []string{"--lease-reuse-duration-seconds=30"}},
	{name: "lease reuse 0", args: []string{"--lease-reuse-duration-seconds=0"}, wantError: "--lease-reuse-duration-seconds should be a positive number"},
	{name: "kube's no-ops", args: []string{"--default-watch-cache-size=0", "--kubelet-read-only-port=0", "--etcd-db-metric-poll-interval=1m"}},
	{name: "kube's no-op, bad value", args: []string{"--default-watch-cache-size=many"}, wantError: "invalid syntax"},
	{name: "kubelet port", args: []string{"--kubelet-port=10251"}},
	{name: "storage initialization timeout", args: []string{"--storage-initialization-timeout=-1s"}, wantError: "--storage-initialization-timeout can not be negative value"},
	{name: "refused duration, same value", args: []string{"--shutdown-watch-termination-grace-period=0"}},
	{name: "refused flag set", args: []string{"--tracing-config-file=/etc/tracing.yaml"},
		wantError: "--tracing-config-file: not supported by miniapiserver: OpenTelemetry tracing is not implemented"},
	{name: "refused prefix family", args: []string{"--audit-webhook-config-file=/etc/webhook.yaml"}, wantError: "--audit-webhook-config-file: not supported by miniapiserver: audit events go to the log file only"},
}

func TestKubeFlagsValidate(t *testing.T) {
	for _, tc := range kubeFlagsValidateTests {
		t.Run(tc.name, func(t *testing.T) {
			err := validateArgs(tc.args...)
			if tc.wantError == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("got %v, want an error with %q", err, tc.wantError)
			}
		})
	}
}

func TestSameAsDefault(t *testing.T) {
	tests := []struct {
		typ, def, s string
		want        bool
	}{
		{"duration", "1m0s", "60s", true},
		{"duration", "1m0s", "2m", false},
		{"bool", "true", "True", true},
		{"int", "1", "01", true},
		{"stringSlice", "[]", "", true},
		{"strings", "[a,b]", "a,b", true},
		{"string", "x", "y", false},
	}
	for _, tc := range tests {
		if got := sameAsDefault(tc.typ, tc.def, tc.s); got != tc.want {
			t.Errorf("sameAsDefault(%q, %q, %q) = %v, want %v", tc.typ, tc.def, tc.s, got, tc.want)
		}
	}
}
