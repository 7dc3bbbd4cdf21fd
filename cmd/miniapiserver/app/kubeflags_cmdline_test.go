package app_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
)

// refused reports whether the flag is one of kube's this build refuses.
func refused(f *pflag.Flag) bool {
	return strings.HasPrefix(f.Usage, "kube-apiserver's flag, not supported by miniapiserver")
}

// parse parses args with the real command's flags.
func parse(t *testing.T, args []string) (*app.Options, *pflag.FlagSet) {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return o, fs
}

// TestKubeadmCommandLine parses kubeadm's kube-apiserver command line
// (its static pod manifest, v1.37): every flag is known, and none is
// refused.
func TestKubeadmCommandLine(t *testing.T) {
	args := []string{
		"--advertise-address=192.168.0.10", "--allow-privileged=true", "--authorization-mode=Node,RBAC",
		"--client-ca-file=/etc/kubernetes/pki/ca.crt", "--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true", "--etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt",
		"--etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt", "--etcd-keyfile=/etc/kubernetes/pki/apiserver-etcd-client.key",
		"--etcd-servers=https://127.0.0.1:2379", "--kubelet-client-certificate=/etc/kubernetes/pki/apiserver-kubelet-client.crt",
		"--kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key", "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--proxy-client-cert-file=/etc/kubernetes/pki/front-proxy-client.crt", "--proxy-client-key-file=/etc/kubernetes/pki/front-proxy-client.key",
		"--requestheader-allowed-names=front-proxy-client", "--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User", "--secure-port=6443",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--service-account-key-file=/etc/kubernetes/pki/sa.pub",
		"--service-account-signing-key-file=/etc/kubernetes/pki/sa.key", "--service-cluster-ip-range=10.96.0.0/12",
		"--tls-cert-file=/etc/kubernetes/pki/apiserver.crt", "--tls-private-key-file=/etc/kubernetes/pki/apiserver.key",
	}
	_, fs := parse(t, args)
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if refused(fs.Lookup(name)) {
			t.Errorf("--%s: kubeadm sets it, and this server refuses it", name)
		}
	}
}

// TestKindCommandLine: kind's extra flags parse and validate.
func TestKindCommandLine(t *testing.T) {
	o, _ := parse(t, []string{"--feature-gates=", "--runtime-config=", "--service-node-port-range=30000-32767", "--v=4"})
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestKwokCommandLine: kwok's flags parse; all but its tracing
// configuration validate (tracing is refused: not implemented).
func TestKwokCommandLine(t *testing.T) {
	o, _ := parse(t, []string{"--admission-control=", "--runtime-config=api/legacy=false,api/all=false,v1=true,apps/v1=true",
		"--feature-gates=", "--max-requests-inflight=0", "--max-mutating-requests-inflight=0", "--enable-priority-and-fairness=false",
		"--authorization-mode=Node,RBAC", "--v=4"})
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	o, _ = parse(t, []string{"--tracing-config-file=/etc/kwok/tracing.yaml"})
	err := o.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "--tracing-config-file: not supported by miniapiserver: ") {
		t.Fatalf("got %v, want --tracing-config-file refused", err)
	}
}
