package app_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestTLSFlags: --tls-min-version and --tls-cipher-suites decide what a
// TLS client gets, as kube's.
func TestTLSFlags(t *testing.T) {
	ts := startWithFlags(t, "--tls-min-version=VersionTLS12", "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(cfg *tls.Config) (*tls.ConnectionState, error) {
		cfg.InsecureSkipVerify = true
		conn, err := tls.Dial("tcp", u.Host, cfg)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		st := conn.ConnectionState()
		return &st, nil
	}
	st, err := dial(&tls.Config{MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	if name := tls.CipherSuiteName(st.CipherSuite); name != "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" && name != "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" {
		t.Errorf("TLS 1.2 cipher suite %s, want one of --tls-cipher-suites", name)
	}
	if _, err := dial(&tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}); err == nil {
		t.Error("a handshake with only suites not in --tls-cipher-suites succeeded")
	}

	ts13 := startWithFlags(t, "--tls-min-version=VersionTLS13")
	u, _ = url.Parse(ts13.URL)
	if _, err := dial(&tls.Config{MaxVersion: tls.VersionTLS12}); err == nil {
		t.Error("a TLS 1.2 handshake succeeded with --tls-min-version=VersionTLS13")
	}
}

// TestAdmissionControlEmpty: kwok's --admission-control= turns every
// admission plugin off, as in kube: a pod gets no service account, and an
// object goes into a namespace that does not exist.
func TestAdmissionControlEmpty(t *testing.T) {
	ts := startWithFlags(t, "--admission-control=")
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	got, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "" || len(got.Spec.Tolerations) != 0 {
		t.Errorf("service account %q, tolerations %v: want none (ServiceAccount, DefaultTolerationSeconds off)", got.Spec.ServiceAccountName, got.Spec.Tolerations)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	if _, err := client.CoreV1().ConfigMaps("nowhere").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Errorf("a ConfigMap in a missing namespace without NamespaceLifecycle: %v", err)
	}
}

// TestAuditLogBlocking: with --audit-log-mode=blocking (kube's default)
// a request's event is in the log by the time its response is.
func TestAuditLogBlocking(t *testing.T) {
	dir := t.TempDir()
	policy, log := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startWithFlags(t, "--audit-log-mode=blocking", "--audit-policy-file="+policy, "--audit-log-path="+log)
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	for i := range 20 {
		name := "audited-" + string(rune('a'+i))
		if _, err := client.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(`"name":"`+name+`"`)) {
			t.Fatalf("the create of %s is not in the audit log once answered", name)
		}
	}
}
