package auth

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	jose "gopkg.in/go-jose/go-jose.v2"
	"gopkg.in/go-jose/go-jose.v2/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// saFixture is a service account, and a pod running as it, in a
// namespace of the test.
type saFixture struct {
	ns  string
	sa  *corev1.ServiceAccount
	pod *corev1.Pod
}

func newSAFixture(t *testing.T) saFixture {
	t.Helper()
	c := clientset(t)
	ns := srv.CreateNamespace(t)
	sa, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{ServiceAccountName: "robot", Containers: []corev1.Container{{Name: "c", Image: "x"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return saFixture{ns: ns, sa: sa, pod: pod}
}

func (f saFixture) token(t *testing.T, spec authenticationv1.TokenRequestSpec) (*authenticationv1.TokenRequest, error) {
	t.Helper()
	return clientset(t).CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
}

func withToken(token string) *rest.Config {
	cfg := srv.AnonymousClientConfig()
	cfg.BearerToken = token
	return cfg
}

// TestTokenRequestBoundToPod: a token bound to a pod authenticates as the
// service account (with the pod in its extras) until the pod is deleted.
func TestTokenRequestBoundToPod(t *testing.T) {
	t.Parallel()
	f := newSAFixture(t)
	tr, err := f.token(t, authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Spec.ExpirationSeconds == nil || *tr.Spec.ExpirationSeconds != 3600 || !slices.Equal(tr.Spec.Audiences, []string{"https://kubernetes.default.svc.cluster.local"}) {
		t.Errorf("defaults: %+v", tr.Spec)
	}
	if d := time.Until(tr.Status.ExpirationTimestamp.Time); d < 59*time.Minute || d > time.Hour {
		t.Errorf("expires in %v", d)
	}
	u, err := whoami(t, withToken(tr.Status.Token))
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "system:serviceaccount:"+f.ns+":robot" || u.UID != string(f.sa.UID) ||
		!slices.Equal(u.Groups, []string{"system:serviceaccounts", "system:serviceaccounts:" + f.ns, "system:authenticated"}) ||
		!slices.Equal(u.Extra["authentication.kubernetes.io/pod-name"], []string{"p"}) ||
		!slices.Equal(u.Extra["authentication.kubernetes.io/pod-uid"], []string{string(f.pod.UID)}) {
		t.Errorf("got %+v", u)
	}
	if err := clientset(t).CoreV1().Pods(f.ns).Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the token of a deleted pod is refused", func() (bool, any) {
		_, err := whoami(t, withToken(tr.Status.Token))
		return apierrors.IsUnauthorized(err), err
	})
	review := tokenReview(t, tr.Status.Token, nil)
	if review.Status.Authenticated || review.Status.Error != "service account token has been invalidated" {
		t.Errorf("review after the pod is gone: %+v", review.Status)
	}
}

// TestTokenOfReplacedServiceAccount: a token dies with its service
// account, even when one of the same name replaces it.
func TestTokenOfReplacedServiceAccount(t *testing.T) {
	t.Parallel()
	f := newSAFixture(t)
	tr, err := f.token(t, authenticationv1.TokenRequestSpec{})
	if err != nil {
		t.Fatal(err)
	}
	sas := clientset(t).CoreV1().ServiceAccounts(f.ns)
	if err := sas.Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the token of a replaced service account is refused", func() (bool, any) {
		review := tokenReview(t, tr.Status.Token, nil)
		return !review.Status.Authenticated && strings.HasPrefix(review.Status.Error, "service account UID ("), review.Status
	})
}

// TestTokenAudiences: a token for another audience is not accepted by
// the API, but a TokenReview for that audience says whose it is.
func TestTokenAudiences(t *testing.T) {
	t.Parallel()
	f := newSAFixture(t)
	tr, err := f.token(t, authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}, ExpirationSeconds: ptr.To[int64](7200)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(t, withToken(tr.Status.Token)); !apierrors.IsUnauthorized(err) {
		t.Errorf("a token for vault used on the API: %v, want 401", err)
	}
	review := tokenReview(t, tr.Status.Token, []string{"vault"})
	if !review.Status.Authenticated || review.Status.User.Username != "system:serviceaccount:"+f.ns+":robot" || !slices.Equal(review.Status.Audiences, []string{"vault"}) {
		t.Errorf("review for vault: %+v", review.Status)
	}
	review = tokenReview(t, tr.Status.Token, nil)
	want := `token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]`
	if review.Status.Authenticated || review.Status.Error != want {
		t.Errorf("review for the API: %+v, want error %q", review.Status, want)
	}
	if review := tokenReview(t, "garbage", nil); review.Status.Authenticated || review.Status.Error != "invalid bearer token" {
		t.Errorf("review of garbage: %+v", review.Status)
	}
}

// TestTokenRequestErrors: kube-apiserver 1.37.2's answers to bad token
// requests, code and message.
func TestTokenRequestErrors(t *testing.T) {
	t.Parallel()
	f := newSAFixture(t)
	c := clientset(t).CoreV1().ServiceAccounts(f.ns)
	for _, tc := range []struct {
		name string
		sa   string
		req  authenticationv1.TokenRequest
		code int32
		msg  string
	}{
		{"too short", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](100)}}, 422,
			`TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 10 minutes`},
		{"too long", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](10000000000)}}, 422,
			`TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 10000000000: may not specify a duration larger than 2^32 seconds`},
		{"no such service account", "nosa", authenticationv1.TokenRequest{}, 404, `serviceaccounts "nosa" not found`},
		{"no such pod", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", Name: "nopod"}}}, 404,
			`pods "nopod" not found`},
		{"pod of another uid", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", Name: "p", UID: "wrong"}}}, 409,
			`Operation cannot be fulfilled on Pod "p": the UID in the bound object reference (wrong) does not match the UID in record. The object might have been deleted and then recreated`},
		{"deployment", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Name: "p"}}}, 400,
			`cannot bind token to object of type apps/v1, Kind=Deployment`},
		{"other name", "robot", authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, 422,
			`TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateToken(ctx, tc.sa, &tc.req, metav1.CreateOptions{})
			var status apierrors.APIStatus
			if !errorsAs(err, &status) || status.Status().Code != tc.code || status.Status().Message != tc.msg {
				t.Errorf("got %v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}

// TestExpiredToken: a token past its expiry is refused, with kube's words.
func TestExpiredToken(t *testing.T) {
	t.Parallel()
	f := newSAFixture(t)
	key, err := serviceaccount.ReadPrivateKey(filepath.Join(srv.Options.DataDir, "pki", "sa.key"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := serviceaccount.NewSigner("https://kubernetes.default.svc.cluster.local", key)
	if err != nil {
		t.Fatal(err)
	}
	b := serviceaccount.Binding{Namespace: f.ns, ServiceAccount: serviceaccount.Ref{Name: "robot", UID: string(f.sa.UID)}}
	public, private := serviceaccount.Claims(b, []string{"https://kubernetes.default.svc.cluster.local"}, time.Hour, 0, time.Now().Add(-2*time.Hour))
	token, err := signer.Sign(public, private)
	if err != nil {
		t.Fatal(err)
	}
	if review := tokenReview(t, token, nil); review.Status.Authenticated || review.Status.Error != "service account token has expired" {
		t.Errorf("an expired token: %+v", review.Status)
	}
}

// TestLegacyToken: a kubernetes.io/service-account-token secret's token
// (signed as kube-controller-manager signs them) is its service account
// while the secret holds it.
func TestLegacyToken(t *testing.T) {
	t.Parallel()
	f := newSAFixture(t)
	key, err := serviceaccount.ReadPrivateKey(filepath.Join(srv.Options.DataDir, "pki", "sa.key"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := serviceaccount.NewSigner(serviceaccount.LegacyIssuer, key)
	if err != nil {
		t.Fatal(err)
	}
	token, err := signer.Sign(serviceaccount.LegacyClaims(f.ns, "robot", string(f.sa.UID), "robot-token"))
	if err != nil {
		t.Fatal(err)
	}
	secrets := clientset(t).CoreV1().Secrets(f.ns)
	if _, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: "robot"}},
		Type:       corev1.SecretTypeServiceAccountToken, Data: map[string][]byte{"token": []byte(token)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := whoami(t, withToken(token))
	if err != nil || u.Username != "system:serviceaccount:"+f.ns+":robot" {
		t.Fatalf("legacy token: %+v %v", u, err)
	}
	if err := secrets.Delete(ctx, "robot-token", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the token of a deleted secret is refused", func() (bool, any) {
		review := tokenReview(t, token, nil)
		return !review.Status.Authenticated && review.Status.Error == "Token has been invalidated", review.Status
	})
}

// TestIssuerDiscovery: the OpenID documents let others verify the
// server's tokens: the issuer is the tokens', the key set verifies them.
func TestIssuerDiscovery(t *testing.T) {
	t.Parallel()
	f := newSAFixture(t)
	tr, err := f.token(t, authenticationv1.TokenRequestSpec{})
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Issuer  string   `json:"issuer"`
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	getJSON(t, "/.well-known/openid-configuration", "application/json", &config)
	if config.Issuer != "https://kubernetes.default.svc.cluster.local" || config.JWKSURI != srv.URL+"/openid/v1/jwks" || !slices.Equal(config.Algs, []string{"ES256"}) {
		t.Errorf("openid-configuration: %+v", config)
	}
	var keys jose.JSONWebKeySet
	getJSON(t, "/openid/v1/jwks", "application/jwk-set+json", &keys)
	tok, err := jwt.ParseSigned(tr.Status.Token)
	if err != nil {
		t.Fatal(err)
	}
	found := keys.Key(tok.Headers[0].KeyID)
	if len(found) != 1 {
		t.Fatalf("no key %q in %+v", tok.Headers[0].KeyID, keys)
	}
	var claims jwt.Claims
	if err := tok.Claims(found[0].Key, &claims); err != nil || claims.Issuer != config.Issuer {
		t.Errorf("verifying with the published key: %v, issuer %q", err, claims.Issuer)
	}
}

func getJSON(t *testing.T, path, contentType string, into any) {
	t.Helper()
	client, err := rest.HTTPClientFor(srv.AnonymousClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != contentType || resp.Header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, resp.Header, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatal(err)
	}
}

// tokenReview asks the server whose token is.
func tokenReview(t *testing.T, token string, audiences []string) *authenticationv1.TokenReview {
	t.Helper()
	r, err := kubernetes.NewForConfigOrDie(srv.ClientConfig).AuthenticationV1().TokenReviews().Create(ctx,
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// eventually waits (10 s at most) until cond holds: the watch cache may
// hold a deleted object a moment longer, as kube's informers do.
func eventually(t *testing.T, what string, cond func() (bool, any)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not so after 10 s: %s; last: %+v", what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
