package auth

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// bootstrapSecret is kubeadm's Secret of bootstrap token id.secret.
func bootstrapSecret(id, secret string, mutate func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": id, "token-secret": secret, "usage-bootstrap-authentication": "true",
			"auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
			"expiration":        time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

// TestBootstrapTokens: with --enable-bootstrap-token-auth a bootstrap
// token is system:bootstrap:<id> in system:bootstrappers and its extra
// groups; an expired token, one not marked for authentication, a wrong
// secret and every token without the flag are 401.
func TestBootstrapTokens(t *testing.T) {
	t.Parallel()
	on := testserver.Start(t, func(o *app.Options) { o.Auth.EnableBootstrapTokenAuth = true })
	off := testserver.Start(t)
	secrets := map[*testserver.TestServer]map[string]*corev1.Secret{
		on: {
			"abcdef": bootstrapSecret("abcdef", "0123456789abcdef", nil),
			"expird": bootstrapSecret("expird", "0123456789abcdef", func(s *corev1.Secret) {
				s.StringData["expiration"] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
			}),
			"nouse1": bootstrapSecret("nouse1", "0123456789abcdef", func(s *corev1.Secret) { delete(s.StringData, "usage-bootstrap-authentication") }),
		},
		off: {"abcdef": bootstrapSecret("abcdef", "0123456789abcdef", nil)},
	}
	for ts, byID := range secrets {
		for _, s := range byID {
			if _, err := kubernetes.NewForConfigOrDie(ts.ClientConfig).CoreV1().Secrets("kube-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	u, err := whoami(t, withTokenOn(on, "abcdef.0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"}
	if u.Username != "system:bootstrap:abcdef" || !slices.Equal(u.Groups, want) {
		t.Errorf("got %+v", u)
	}
	for name, c := range map[string]struct {
		ts    *testserver.TestServer
		token string
	}{
		"wrong secret": {on, "abcdef.0123456789abcdeg"}, "expired": {on, "expird.0123456789abcdef"},
		"not for authentication": {on, "nouse1.0123456789abcdef"}, "no such token": {on, "zzzzzz.0123456789abcdef"},
		"without --enable-bootstrap-token-auth": {off, "abcdef.0123456789abcdef"},
	} {
		if _, err := whoami(t, withTokenOn(c.ts, c.token)); !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: got %v, want 401", name, err)
		}
	}
}

func withTokenOn(ts *testserver.TestServer, token string) *rest.Config {
	cfg := ts.AnonymousClientConfig()
	cfg.BearerToken = token
	return cfg
}
