package filters

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// TestUpgradeNeedsCreate checks that a GET of pods/exec, attach or
// portforward (a WebSocket upgrade) needs create as well, as in kube,
// while other GETs and POSTs are authorized once.
func TestUpgradeNeedsCreate(t *testing.T) {
	// The user may get everything and create nothing.
	getOnly := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetVerb() == "get" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no create", nil
	})
	served := false
	h := WithRequestInfo(userIs("alice", WithAuthorization(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), getOnly)))
	for _, tc := range []struct {
		method, path string
		code         int
		message      string
	}{
		{"GET", "/api/v1/namespaces/ns/pods/p/exec?command=ls", 403, `pods "p" is forbidden: no create`},
		{"GET", "/api/v1/namespaces/ns/pods/p/attach", 403, `pods "p" is forbidden: no create`},
		{"GET", "/api/v1/namespaces/ns/pods/p/portforward", 403, `pods "p" is forbidden: no create`},
		{"GET", "/api/v1/namespaces/ns/pods/p/log", 200, ""},
		{"GET", "/api/v1/namespaces/ns/pods/p/proxy/x", 200, ""},
		{"GET", "/apis/example.io/v1/namespaces/ns/pods/p/exec", 200, ""},
	} {
		served = false
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.code && !(tc.code == 200 && served) {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, rec.Code, tc.code)
			continue
		}
		if tc.code != 403 {
			continue
		}
		var status metav1.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil || status.Message != tc.message || status.Reason != metav1.StatusReasonForbidden || served {
			t.Errorf("%s %s: %q (%v), served %v; want message %q", tc.method, tc.path, rec.Body, err, served, tc.message)
		}
	}
}

// userIs puts the user name in every request's context.
func userIs(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), &user.DefaultInfo{Name: name})))
	})
}
