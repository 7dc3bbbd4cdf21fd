package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apiservertest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// TestChain checks who the chain says a request is from.
func TestChain(t *testing.T) {
	t.Parallel()
	ca, otherCA := apiservertest.NewCA(t, "ca"), apiservertest.NewCA(t, "ca")
	pool := ca.Pool()
	tokens := NewTokenFile(map[string]*user.DefaultInfo{
		"tok":    {Name: "bob", Groups: []string{"ops"}},
		"tok-in": {Name: "carol", Groups: []string{user.AllAuthenticated}},
	})
	chain := New(Config{ClientCAs: pool, TokenFile: tokens, Anonymous: true})
	closed := New(Config{ClientCAs: pool, TokenFile: tokens})
	for _, tc := range []struct {
		name       string
		chain      authenticator.Request
		header     string
		cert       *x509.Certificate
		wantUser   string
		wantGroups []string
		wantErr    string
	}{
		{"nothing", chain, "", nil, user.Anonymous, []string{user.AllUnauthenticated}, ""},
		{"nothing, no anonymous", closed, "", nil, "", nil, ""},
		{"token", chain, "Bearer tok", nil, "bob", []string{"ops", user.AllAuthenticated}, ""},
		{"lower-case scheme", chain, "bearer tok", nil, "bob", []string{"ops", user.AllAuthenticated}, ""},
		{"already authenticated", chain, "Bearer tok-in", nil, "carol", []string{user.AllAuthenticated}, ""},
		{"unknown token", chain, "Bearer nope", nil, "", nil, "invalid bearer token"},
		{"basic auth", chain, "Basic Ym9iOng=", nil, user.Anonymous, []string{user.AllUnauthenticated}, ""},
		{"extra space", chain, "Bearer  tok", nil, user.Anonymous, []string{user.AllUnauthenticated}, ""},
		{"certificate", chain, "", ca.Client(t, "jane", "dev"), "jane", []string{"dev", user.AllAuthenticated}, ""},
		{"certificate wins", chain, "Bearer nope", ca.Client(t, "jane"), "jane", []string{user.AllAuthenticated}, ""},
		{"no common name", chain, "", ca.Client(t, ""), user.Anonymous, []string{user.AllUnauthenticated}, ""},
		{"foreign certificate", chain, "", otherCA.Client(t, "jane"), "", nil, "verifying certificate SN="},
		{"foreign certificate and a token", chain, "Bearer tok", otherCA.Client(t, "jane"), "bob", []string{"ops", user.AllAuthenticated}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api", nil)
			warnings := &request.Warnings{}
			r = r.WithContext(request.WithWarnings(r.Context(), warnings))
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			if tc.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tc.cert}}
			}
			resp, ok, err := tc.chain.AuthenticateRequest(r)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || ok {
					t.Fatalf("got %v %v, want error %q", ok, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantUser == "" {
				if ok {
					t.Errorf("recognized as %v", resp.User)
				}
				return
			}
			if !ok || resp.User.GetName() != tc.wantUser || !slices.Equal(resp.User.GetGroups(), tc.wantGroups) {
				t.Errorf("got %v %+v, want %s %v", ok, resp, tc.wantUser, tc.wantGroups)
			}
			if tc.name == "extra space" && len(warnings.List()) != 1 {
				t.Errorf("warnings %v", warnings.List())
			}
		})
	}
}

// fakeObjects is an ObjectGetter of fixed objects.
type fakeObjects map[string]metav1.Object

func (f fakeObjects) get(kind, ns, name string) (metav1.Object, error) {
	if o, ok := f[kind+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, errors.New(kind + " not found")
}

func (f fakeObjects) GetServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	o, err := f.get("sa", ns, name)
	if err != nil {
		return nil, err
	}
	return o.(*corev1.ServiceAccount), nil
}

func (f fakeObjects) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	o, err := f.get("pod", ns, name)
	if err != nil {
		return nil, err
	}
	return o.(*corev1.Pod), nil
}

func (f fakeObjects) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	o, err := f.get("secret", ns, name)
	if err != nil {
		return nil, err
	}
	return o.(*corev1.Secret), nil
}

func (f fakeObjects) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	o, err := f.get("node", "", name)
	if err != nil {
		return nil, err
	}
	return o.(*corev1.Node), nil
}

// TestServiceAccountTokens checks the validation of bound tokens.
func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const issuer = "https://issuer"
	signer, err := serviceaccount.NewSigner(issuer, key)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := serviceaccount.KeyID(key.Public())
	keys := []serviceaccount.PublicKey{{KeyID: id, PublicKey: key.Public()}}
	meta := func(name, uid string, deleted bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)}
		if deleted {
			m.DeletionTimestamp = &metav1.Time{Time: time.Now().Add(-2 * time.Minute)}
		}
		return m
	}
	objects := fakeObjects{
		"sa/ns/robot":      &corev1.ServiceAccount{ObjectMeta: meta("robot", "sa-uid", false)},
		"pod/ns/p":         &corev1.Pod{ObjectMeta: meta("p", "pod-uid", false)},
		"pod/ns/leaving":   &corev1.Pod{ObjectMeta: meta("leaving", "leaving-uid", true)},
		"node//n":          &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "node-uid"}},
		"secret/ns/bound":  &corev1.Secret{ObjectMeta: meta("bound", "secret-uid", false)},
		"sa/ns/other-robo": &corev1.ServiceAccount{ObjectMeta: meta("other-robo", "x", false)},
	}
	tokens := NewServiceAccountTokens([]string{issuer}, keys, authenticator.Audiences{"api"}, objects)
	sa := serviceaccount.Ref{Name: "robot", UID: "sa-uid"}
	sign := func(b serviceaccount.Binding, auds []string, issued time.Time) string {
		tok, err := signer.Sign(serviceaccount.Claims(b, auds, time.Hour, 0, issued))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	now := time.Now()
	for _, tc := range []struct {
		name, token string
		wantExtra   map[string][]string
		wantErr     string
	}{
		{"plain", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa}, []string{"api"}, now), nil, ""},
		{"pod", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa, Pod: &serviceaccount.Ref{Name: "p", UID: "pod-uid"}}, []string{"api"}, now),
			map[string][]string{"authentication.kubernetes.io/pod-name": {"p"}, "authentication.kubernetes.io/pod-uid": {"pod-uid"}}, ""},
		{"node", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa, Node: &serviceaccount.Ref{Name: "n", UID: "node-uid"}}, []string{"api"}, now),
			map[string][]string{"authentication.kubernetes.io/node-name": {"n"}, "authentication.kubernetes.io/node-uid": {"node-uid"}}, ""},
		{"secret", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa, Secret: &serviceaccount.Ref{Name: "bound", UID: "secret-uid"}}, []string{"api"}, now), nil, ""},
		{"pod gone", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa, Pod: &serviceaccount.Ref{Name: "gone", UID: "u"}}, []string{"api"}, now), nil,
			"service account token has been invalidated"},
		{"pod deleted", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa, Pod: &serviceaccount.Ref{Name: "leaving", UID: "leaving-uid"}}, []string{"api"}, now), nil,
			"service account token has been invalidated"},
		{"pod replaced", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa, Pod: &serviceaccount.Ref{Name: "p", UID: "old"}}, []string{"api"}, now), nil,
			"pod UID (pod-uid) does not match service account pod ref claim (old)"},
		{"node replaced", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa, Node: &serviceaccount.Ref{Name: "n", UID: "old"}}, []string{"api"}, now), nil,
			"node UID (node-uid) does not match service account node ref claim (old)"},
		{"service account replaced", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: serviceaccount.Ref{Name: "robot", UID: "old"}}, []string{"api"}, now), nil,
			"service account UID (sa-uid) does not match claim (old)"},
		{"expired", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa}, []string{"api"}, now.Add(-2*time.Hour)), nil, "service account token has expired"},
		{"not yet valid", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa}, []string{"api"}, now.Add(time.Hour)), nil, "service account token is not valid yet"},
		{"other audience", sign(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa}, []string{"vault"}, now), nil,
			`token audiences ["vault"] is invalid for the target audiences ["api"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, ok, err := tokens.AuthenticateToken(context.Background(), tc.token)
			if tc.wantErr != "" {
				if ok || err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got %v %v, want %q", ok, err, tc.wantErr)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("got %v %v", ok, err)
			}
			u := resp.User
			if u.GetName() != "system:serviceaccount:ns:robot" || u.GetUID() != "sa-uid" || !slices.Equal(resp.Audiences, []string{"api"}) {
				t.Errorf("user %+v audiences %v", u, resp.Audiences)
			}
			extra := u.GetExtra()
			for k, v := range tc.wantExtra {
				if !slices.Equal(extra[k], v) {
					t.Errorf("extra %s: %v, want %v", k, extra[k], v)
				}
			}
			if id := extra["authentication.kubernetes.io/credential-id"]; len(id) != 1 || !strings.HasPrefix(id[0], "JTI=") {
				t.Errorf("credential id %v", id)
			}
		})
	}
	// A token of another issuer is not recognized: another authenticator
	// may know it.
	other, _ := serviceaccount.NewSigner("https://elsewhere", key)
	tok, _ := other.Sign(serviceaccount.Claims(serviceaccount.Binding{Namespace: "ns", ServiceAccount: sa}, []string{"api"}, time.Hour, 0, now))
	if _, ok, err := tokens.AuthenticateToken(context.Background(), tok); ok || err != nil {
		t.Errorf("a token of another issuer: %v %v", ok, err)
	}
}
