package externalauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	jose "gopkg.in/go-jose/go-jose.v2"
	"gopkg.in/go-jose/go-jose.v2/jwt"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// issuer is an OpenID issuer served by the test over HTTPS: its discovery
// document and its keys (one RSA, one ECDSA); it signs the tokens the
// tests present.
type issuer struct {
	server *testserver.WebhookServer
	url    string
	rsa    *rsa.PrivateKey
	ec     *ecdsa.PrivateKey
}

func startIssuer(t *testing.T) *issuer {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss := &issuer{rsa: rsaKey, ec: ecKey}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.url, "jwks_uri": iss.url + "/keys",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &rsaKey.PublicKey, KeyID: "rsa", Algorithm: "RS256", Use: "sig"},
			{Key: &ecKey.PublicKey, KeyID: "ec", Algorithm: "ES256", Use: "sig"},
		}})
	})
	iss.server = testserver.StartWebhookServer(t, mux)
	iss.url = fmt.Sprintf("https://127.0.0.1:%d", iss.server.Port())
	return iss
}

// claims are a token's claims: the defaults of a valid token for
// audience aud, changed by the test.
func (iss *issuer) claims(aud string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": iss.url, "aud": aud, "sub": "jane", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"email": "jane@example.com", "email_verified": true, "groups": []string{"devs", "ops"}, "hd": "example.com", "tenant": "blue",
	}
}

// sign signs claims with the issuer's RSA key, or its ECDSA key.
func (iss *issuer) sign(t *testing.T, claims map[string]any, ecdsaKey bool) string {
	t.Helper()
	var key crypto.Signer = iss.rsa
	alg, kid := jose.RS256, "rsa"
	if ecdsaKey {
		key, alg, kid = iss.ec, jose.ES256, "ec"
	}
	return signWith(t, key, alg, kid, claims)
}

func signWith(t *testing.T, key crypto.Signer, alg jose.SignatureAlgorithm, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	token, err := jwt.Signed(signer).Claims(claims).CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return token
}
