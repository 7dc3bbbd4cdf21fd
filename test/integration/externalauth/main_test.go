// Package externalauth checks the authenticators and authorizers that ask
// services outside the server, through the real HTTP API with client-go:
// the Webhook authorization mode (--authorization-mode=Webhook and
// --authorization-config, with match conditions and reloads) served by
// the test over HTTPS, and JWT authenticators of an OpenID issuer the test
// serves (--authentication-config and the --oidc-* flags). Each test
// starts the server it needs.
package externalauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// authzWebhook is a SubjectAccessReview webhook served by the test: decide
// answers each review, and every review asked is recorded.
type authzWebhook struct {
	server *testserver.WebhookServer
	decide func(r *authorizationv1.SubjectAccessReview) (status int, answer authorizationv1.SubjectAccessReviewStatus)

	mu      sync.Mutex
	reviews []authorizationv1.SubjectAccessReview
}

func startAuthzWebhook(t *testing.T, decide func(*authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus)) *authzWebhook {
	t.Helper()
	w := &authzWebhook{decide: decide}
	w.server = testserver.StartWebhookServer(t, http.HandlerFunc(w.serve))
	return w
}

func (w *authzWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	var review authorizationv1.SubjectAccessReview
	if r.Method != http.MethodPost || r.URL.Path != "/authorize" || json.NewDecoder(r.Body).Decode(&review) != nil {
		http.Error(rw, "bad request", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.reviews = append(w.reviews, review)
	w.mu.Unlock()
	code, status := w.decide(&review)
	if code != http.StatusOK {
		http.Error(rw, "the test's webhook fails", code)
		return
	}
	review.Status = status
	rw.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rw).Encode(&review)
}

// calls counts the reviews asked about user (and, when not empty, resource).
func (w *authzWebhook) calls(user, resource string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.reviews {
		if r.Spec.User != user {
			continue
		}
		if resource != "" && (r.Spec.ResourceAttributes == nil || r.Spec.ResourceAttributes.Resource != resource) {
			continue
		}
		n++
	}
	return n
}

// last is the last review asked about user.
func (w *authzWebhook) last(user string) (authorizationv1.SubjectAccessReview, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.reviews) - 1; i >= 0; i-- {
		if w.reviews[i].Spec.User == user {
			return w.reviews[i], true
		}
	}
	return authorizationv1.SubjectAccessReview{}, false
}

// kubeconfig writes the kubeconfig that names the webhook (its CA, and
// the path reviews are POSTed to).
func (w *authzWebhook) kubeconfig(t *testing.T) string { return webhookKubeconfig(t, w.server) }

// webhookKubeconfig writes the kubeconfig of a webhook served by s at
// /authorize.
func webhookKubeconfig(t *testing.T, s *testserver.WebhookServer) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["webhook"] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d/authorize", s.Port()),
		CertificateAuthorityData: s.CAPEM,
	}
	c.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{Token: "apiserver-token"}
	c.Contexts["webhook"] = &clientcmdapi.Context{Cluster: "webhook", AuthInfo: "apiserver"}
	c.CurrentContext = "webhook"
	path := filepath.Join(t.TempDir(), "authz-webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeFile writes data to a file of the test's temp dir.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// eventually retries check until it returns nil or a deadline passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
