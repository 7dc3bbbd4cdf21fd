package filters

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apiservertest"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authn"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// benchObjects knows one service account, for service account tokens.
type benchObjects struct{ noObjects }

func (benchObjects) GetServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "sa-uid"}}, nil
}

// BenchmarkFilters measures what the filters cost a GET (the handler does
// nothing), by the credentials it shows, against the filters alone
// (request info, authentication) and the whole chain (with audit off,
// impersonation not asked, the in-flight limits of a non-exempt user, and
// AlwaysAllow); no-filters is the cost of the test request itself.
// go test -run '^$' -bench BenchmarkFilters ./pkg/apiserver/filters
func BenchmarkFilters(b *testing.B) {
	ca := apiservertest.NewCA(b, "ca")
	leaf := ca.Client(b, "jane", "dev")
	pool := ca.Pool()

	saKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const issuer = "https://kubernetes.default.svc.cluster.local"
	signer, _ := serviceaccount.NewSigner(issuer, saKey)
	kid, _ := serviceaccount.KeyID(saKey.Public())
	saToken, err := signer.Sign(serviceaccount.Claims(serviceaccount.Binding{Namespace: "ns", ServiceAccount: serviceaccount.Ref{Name: "sa", UID: "sa-uid"}},
		[]string{issuer}, time.Hour, 0, time.Now()))
	if err != nil {
		b.Fatal(err)
	}
	keys := []serviceaccount.PublicKey{{KeyID: kid, PublicKey: saKey.Public()}}
	auds := authenticator.Audiences{issuer}
	chain := authn.New(authn.Config{
		ClientCAs: pool, APIAudiences: auds, Anonymous: true,
		TokenFile: authn.NewTokenFile(map[string]*user.DefaultInfo{"tok": {Name: "bob"}}),
		ServiceAccounts: []authenticator.Token{
			authn.NewLegacyServiceAccountTokens(keys, auds, benchObjects{}, true),
			authn.NewServiceAccountTokens([]string{issuer}, keys, auds, benchObjects{}),
		},
	})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	a := authz.New(authz.Named{Name: "alwaysallow", Authorizer: authz.AlwaysAllow{}})
	authOnly := WithRequestInfo(WithAuthentication(ok, chain, http.HandlerFunc(Unauthorized), auds))
	var whole http.Handler = WithAuthorization(ok, a)
	whole = WithMaxInFlight(whole, InFlightConfig{ReadOnly: 400, Mutating: 200, QueueLength: 50, MaxWait: time.Second}, nil)
	whole = WithImpersonation(whole, a)
	whole = WithAudit(whole, nil, nil)
	whole = WithAuthentication(whole, chain, http.HandlerFunc(Unauthorized), auds)
	whole = WithRequestDeadline(whole, time.Minute)
	whole = WithAuditInit(WithPanicRecovery(WithRequestInfo(WithCacheControl(WithWarnings(whole)))), nil)

	for _, cred := range []struct {
		name   string
		header string
		cert   bool
	}{{"anonymous", "", false}, {"token-file", "Bearer tok", false}, {"client-cert", "", true}, {"serviceaccount-jwt", "Bearer " + saToken, false}} {
		for _, h := range []struct {
			name    string
			handler http.Handler
		}{{"no-filters", ok}, {"authentication", authOnly}, {"all-filters", whole}} {
			b.Run(cred.name+"/"+h.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/c", nil)
					if cred.header != "" {
						r.Header.Set("Authorization", cred.header)
					}
					if cred.cert {
						r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
					}
					rec := httptest.NewRecorder()
					h.handler.ServeHTTP(rec, r)
					if rec.Code != http.StatusOK {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
				}
			})
		}
	}
}
