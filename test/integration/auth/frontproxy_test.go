package auth

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// headerTransport adds headers to every request.
type headerTransport struct {
	next    http.RoundTripper
	headers http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

// proxyConfig is a client presenting certPEM/keyPEM that sends headers.
func proxyConfig(ts *testserver.TestServer, certPEM, keyPEM []byte, headers http.Header) *rest.Config {
	cfg := rest.AnonymousClientConfig(ts.ClientConfig)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return headerTransport{rt, headers} }
	return cfg
}

// TestFrontProxy: a proxy whose client certificate the
// --requestheader-client-ca-file verifies, with an allowed common name,
// names the user in headers (name, uid, groups, extras %-decoded); a
// proxy certificate of another name is refused (401); the headers of a
// client that is not such a proxy identify nobody; and
// extension-apiserver-authentication publishes the configuration as kube.
func TestFrontProxy(t *testing.T) {
	t.Parallel()
	proxyCert, proxyKey := selfSignedClientCert(t, "front-proxy-client")
	otherCert, otherKey := selfSignedClientCert(t, "someone-else")
	dir := t.TempDir()
	caFile := filepath.Join(dir, "front-proxy-ca.crt")
	if err := os.WriteFile(caFile, append(append([]byte{}, proxyCert...), otherCert...), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) {
		o.Auth.RequestHeader = app.RequestHeaderOptions{
			ClientCAFile: caFile, AllowedNames: []string{"front-proxy-client"},
			UsernameHeaders: []string{"X-Remote-User"}, UIDHeaders: []string{"X-Remote-Uid"},
			GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
		}
	})
	headers := http.Header{"X-Remote-User": {"alice"}, "X-Remote-Uid": {"a-1"}, "X-Remote-Group": {"dev", "ops"},
		"X-Remote-Extra-Scopes%2fwith-Slash": {"s1", "s2"}}
	u, err := whoami(t, proxyConfig(ts, proxyCert, proxyKey, headers))
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "alice" || u.UID != "a-1" || !slices.Equal(u.Groups, []string{"dev", "ops", "system:authenticated"}) ||
		!slices.Equal(u.Extra["scopes/with-slash"], []string{"s1", "s2"}) {
		t.Errorf("through the proxy: %+v", u)
	}
	if _, err := whoami(t, proxyConfig(ts, otherCert, otherKey, headers)); !apierrors.IsUnauthorized(err) {
		t.Errorf("a proxy certificate not in --requestheader-allowed-names: %v, want 401", err)
	}
	// The admin's own certificate is no proxy: its headers count for nothing.
	admin := ts.ClientConfigFor(t, "jane", "system:masters")
	admin.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return headerTransport{rt, headers} }
	if u, err := whoami(t, admin); err != nil || u.Username != "jane" {
		t.Errorf("a client certificate with the headers: %+v %v", u, err)
	}
	cm, err := kubernetes.NewForConfigOrDie(ts.ClientConfig).CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkRequestHeaderData(t, cm, string(proxyCert)+string(otherCert))
}

func checkRequestHeaderData(t *testing.T, cm *corev1.ConfigMap, ca string) {
	t.Helper()
	want := map[string][]string{
		"requestheader-allowed-names": {"front-proxy-client"}, "requestheader-username-headers": {"X-Remote-User"},
		"requestheader-uid-headers": {"X-Remote-Uid"}, "requestheader-group-headers": {"X-Remote-Group"},
		"requestheader-extra-headers-prefix": {"X-Remote-Extra-"},
	}
	for key, values := range want {
		var got []string
		if err := json.Unmarshal([]byte(cm.Data[key]), &got); err != nil || !slices.Equal(got, values) {
			t.Errorf("%s: %q", key, cm.Data[key])
		}
	}
	if cm.Data["requestheader-client-ca-file"] != ca || cm.Data["client-ca-file"] == "" {
		t.Errorf("the bundles: %v", cm.Data)
	}
}

// TestRequestHeaderNeedsCA: header flags without the CA that verifies the
// proxies are refused at start.
func TestRequestHeaderNeedsCA(t *testing.T) {
	t.Parallel()
	o := app.NewOptions()
	o.Auth.RequestHeader.UsernameHeaders = []string{"X-Remote-User"}
	if err := o.Validate(); err == nil {
		t.Fatal("--requestheader-username-headers without --requestheader-client-ca-file was accepted")
	}
}
