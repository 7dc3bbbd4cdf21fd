package filters

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authn"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// noObjects knows no object: every service account token fails its
// lookups.
type noObjects struct{}

func (noObjects) GetServiceAccount(context.Context, string, string) (*corev1.ServiceAccount, error) {
	return nil, os.ErrNotExist
}
func (noObjects) GetPod(context.Context, string, string) (*corev1.Pod, error) {
	return nil, os.ErrNotExist
}
func (noObjects) GetSecret(context.Context, string, string) (*corev1.Secret, error) {
	return nil, os.ErrNotExist
}
func (noObjects) GetNode(context.Context, string) (*corev1.Node, error) { return nil, os.ErrNotExist }

// fuzzChain is the request path from the request info to authorization,
// without panic recovery (a panic must fail the fuzzer), in front of a
// handler that answers 200. Client certificates of testdata/fuzz-ca.crt,
// the token "tok" (bob), service account tokens; jane may impersonate
// anyone, everyone may read.
func fuzzChain(t testing.TB) http.Handler {
	caPEM, err := os.ReadFile(filepath.Join("testdata", "fuzz-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	keys, err := serviceaccount.ParsePublicKeys(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	auds := authenticator.Audiences{"https://kubernetes.default.svc.cluster.local"}
	chain := authn.New(authn.Config{
		ClientCAs:    pool,
		TokenFile:    authn.NewTokenFile(map[string]*user.DefaultInfo{"tok": {Name: "bob"}}),
		APIAudiences: auds,
		Anonymous:    true,
		ServiceAccounts: []authenticator.Token{
			authn.NewLegacyServiceAccountTokens(keys, auds, noObjects{}, true),
			authn.NewServiceAccountTokens([]string{auds[0]}, keys, auds, noObjects{}),
		},
	})
	policy := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == "jane" || a.GetVerb() == "get" || a.GetVerb() == "list" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	a := authz.New(authz.Named{Name: "test", Authorizer: policy})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	h := WithAuthorization(ok, a)
	h = WithImpersonation(h, a)
	h = WithAudit(h, audit.NewPolicy(&auditPolicyAll), discardSink{})
	h = WithAuthentication(h, chain, http.HandlerFunc(Unauthorized), auds)
	h = WithRequestInfo(h)
	return WithAuditInit(h, nil)
}

type discardSink struct{}

func (discardSink) ProcessEvent(*auditv1.Event) {}

// FuzzAuthentication sends requests with any Authorization header, client
// certificate bytes and impersonation headers: the answer is a success,
// 400 (impersonation without a user), 401 or 403, never a panic.
func FuzzAuthentication(f *testing.F) {
	der, err := os.ReadFile(filepath.Join("testdata", "client.der"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("", []byte(nil), "", "", "", "", "")
	f.Add("Bearer tok", []byte(nil), "", "", "", "", "")
	f.Add("Bearer tok", der, "alice", "devs", "u1", "scopes", "view")
	f.Add("", der, "system:serviceaccount:ns:sa", "", "", "", "")
	f.Add("Bearer eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMuY2x1c3Rlci5sb2NhbCJ9.c2ln", []byte(nil), "system:node:n1", "", "", "", "")
	f.Add("bearer  x", der[:len(der)/2], "", "g", "", "%zz", "")
	h := fuzzChain(f)
	f.Fuzz(func(t *testing.T, authorization string, certDER []byte, asUser, asGroup, asUID, extraKey, extraValue string) {
		r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps", nil)
		if authorization != "" {
			r.Header["Authorization"] = []string{authorization}
		}
		if cert, err := x509.ParseCertificate(certDER); err == nil {
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
		}
		for name, value := range map[string]string{"Impersonate-User": asUser, "Impersonate-Group": asGroup, "Impersonate-Uid": asUID} {
			if value != "" {
				r.Header[name] = []string{value}
			}
		}
		if extraKey != "" || extraValue != "" {
			r.Header["Impersonate-Extra-"+extraKey] = []string{extraValue}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
		default:
			t.Errorf("answer %d %s", rec.Code, rec.Body)
		}
		if rec.Code == http.StatusBadRequest && !strings.Contains(rec.Body.String(), "without impersonating a user name") {
			t.Errorf("a 400 that is not about impersonation: %s", rec.Body)
		}
	})
}

// auditPolicyAll audits everything, bodies included.
var auditPolicyAll = auditv1.Policy{Rules: []auditv1.PolicyRule{{Level: auditv1.LevelRequestResponse}}}

// TestFuzzChain checks the fuzzed chain reaches its deep paths: the
// certificate of testdata is jane, who may impersonate.
func TestFuzzChain(t *testing.T) {
	der, err := os.ReadFile(filepath.Join("testdata", "client.der"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	h := fuzzChain(t)
	for _, tc := range []struct {
		name, asUser string
		cert         bool
		method       string
		want         int
	}{
		{"jane", "", true, "POST", http.StatusOK},
		{"jane as alice", "alice", true, "GET", http.StatusOK},
		{"alice may not write", "alice", true, "POST", http.StatusForbidden},
		{"anonymous reads", "", false, "GET", http.StatusOK},
		{"anonymous writes", "", false, "POST", http.StatusForbidden},
		{"anonymous as alice", "alice", false, "GET", http.StatusForbidden},
	} {
		r := httptest.NewRequest(tc.method, "/api/v1/namespaces/default/configmaps", nil)
		if tc.cert {
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
		}
		if tc.asUser != "" {
			r.Header.Set("Impersonate-User", tc.asUser)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, rec.Code, rec.Body, tc.want)
		}
	}
}
