package serviceaccount

import (
	"crypto/ecdsa"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/go-jose/go-jose.v2/jwt"
)

// TestKubeToken: a token kube-apiserver 1.37.2 issued (TokenRequest bound
// to a pod, audiences a1 and a2, signed with testdata/kube-sa.pub's key)
// names the key ID this package computes, verifies with the key, and
// reads into the claims this package writes.
func TestKubeToken(t *testing.T) {
	keys, err := ReadPublicKeys(filepath.Join("testdata", "kube-sa.pub"))
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v %v", keys, err)
	}
	if keys[0].KeyID != "9_4gt5dGrH_cyYwc42FIsiyoeLr3iB4ksyjbeel_EXg" {
		t.Errorf("key ID %s, kube's is 9_4gt5dGrH_cyYwc42FIsiyoeLr3iB4ksyjbeel_EXg", keys[0].KeyID)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "kube-pod-token"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Headers[0].KeyID != keys[0].KeyID {
		t.Errorf("the token names key %s", tok.Headers[0].KeyID)
	}
	var public jwt.Claims
	var private PrivateClaims
	if err := tok.Claims(keys[0].PublicKey, &public, &private); err != nil {
		t.Fatal(err)
	}
	k := private.Kubernetes
	if public.Subject != "system:serviceaccount:default:default" || !slices.Equal(public.Audience, jwt.Audience{"a1", "a2"}) ||
		k.Namespace != "default" || k.Svcacct.Name != "default" || k.Pod == nil || k.Pod.Name != "p1" || k.Pod.UID == "" || public.ID == "" {
		t.Errorf("claims %+v %+v", public, private)
	}
}

// TestSignedClaims: the claims this package signs are kube's, key for
// key.
func TestSignedClaims(t *testing.T) {
	pemData, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sa.key")
	if err := os.WriteFile(path, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := ReadPrivateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := key.(*ecdsa.PrivateKey); !ok {
		t.Fatalf("generated %T", key)
	}
	s, err := NewSigner("https://issuer", key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	b := Binding{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}, Pod: &Ref{Name: "p", UID: "u2"}, Node: &Ref{Name: "n", UID: "u3"}}
	token, err := s.Sign(Claims(b, []string{"aud"}, time.Hour, 0, now))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(token)
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	keys, err := ParsePublicKeys(pemData)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Claims(keys[0].PublicKey, &claims); err != nil {
		t.Fatal(err)
	}
	delete(claims, "jti")
	got, _ := json.Marshal(claims)
	want := `{"aud":["aud"],"exp":1700003600,"iat":1700000000,"iss":"https://issuer","kubernetes.io":{"namespace":"ns","node":{"name":"n","uid":"u3"},"pod":{"name":"p","uid":"u2"},"serviceaccount":{"name":"sa","uid":"u1"}},"nbf":1700000000,"sub":"system:serviceaccount:ns:sa"}`
	if string(got) != want {
		t.Errorf("claims\n got %s\nwant %s", got, want)
	}
	if tok.Headers[0].Algorithm != "ES256" || tok.Headers[0].KeyID != keys[0].KeyID {
		t.Errorf("header %+v", tok.Headers[0])
	}
}

// TestDiscovery: kube's OpenID documents, and its rules for the issuer.
func TestDiscovery(t *testing.T) {
	keys, err := ReadPublicKeys(filepath.Join("testdata", "kube-sa.pub"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDiscovery("https://kubernetes.default.svc.cluster.local", "", "127.0.0.1:16443", keys)
	if err != nil {
		t.Fatal(err)
	}
	// As kube-apiserver 1.37.2 served them for the same key.
	wantConfig := `{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"https://127.0.0.1:16443/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`
	if string(d.Config) != wantConfig {
		t.Errorf("config\n got %s\nwant %s", d.Config, wantConfig)
	}
	if !strings.HasPrefix(string(d.JWKS), `{"keys":[{"use":"sig","kty":"RSA","kid":"9_4gt5dGrH_cyYwc42FIsiyoeLr3iB4ksyjbeel_EXg","alg":"RS256","n":"lQs2mxZO0cU-J_S9S9AN1qyOoBfsxQkyZ84C3yx`) {
		t.Errorf("jwks %s", d.JWKS)
	}
	for issuer, want := range map[string]string{
		"kubernetes/serviceaccount": "issuer URL must use https scheme, got: kubernetes/serviceaccount",
		"https://x?a=b":             "issuer URL may not include a query, got: https://x?a=b",
	} {
		if _, err := NewDiscovery(issuer, "", "h:1", keys); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", issuer, err, want)
		}
	}
}
