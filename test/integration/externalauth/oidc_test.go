package externalauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	jose "gopkg.in/go-jose/go-jose.v2"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// whoami is the user the server sees for token (a SelfSubjectReview).
func whoami(srv *testserver.TestServer, token string) (authenticationv1.UserInfo, error) {
	cfg := rest.AnonymousClientConfig(srv.ClientConfig)
	cfg.BearerToken = token
	r, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// waitForIssuer waits until the server has the issuer's keys (fetched in
// the background): token is then accepted.
func waitForIssuer(t *testing.T, srv *testserver.TestServer, token string) {
	t.Helper()
	eventually(t, "the issuer's keys", func() error {
		_, err := whoami(srv, token)
		return err
	})
}

// authenticationConfig is an AuthenticationConfiguration of the issuer
// with CEL claim mappings and validation rules; anonymous requests only
// for /livez.
func authenticationConfig(iss *issuer, audience string) string {
	return fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
anonymous:
  enabled: true
  conditions:
  - path: /livez
jwt:
- issuer:
    url: %s
    audiences: [%s, other-client]
    audienceMatchPolicy: MatchAny
    certificateAuthority: %q
  claimValidationRules:
  - expression: "claims.hd == 'example.com'"
    message: the hosted domain must be example.com
  claimMappings:
    username:
      expression: "'oidc:' + claims.sub"
    groups:
      claim: groups
      prefix: "oidc:"
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
  userValidationRules:
  - expression: "!user.username.startsWith('oidc:system:')"
    message: no system users
`, iss.url, audience, iss.server.CAPEM)
}

// TestAuthenticationConfig runs --authentication-config with a JWT
// authenticator of the test's issuer: valid tokens (RSA and ECDSA) are the
// mapped user; tokens of another audience or issuer, expired, signed by
// an unknown key or failing a validation rule are refused with 401; and
// the file is read again when it changes.
func TestAuthenticationConfig(t *testing.T) {
	t.Parallel()
	iss := startIssuer(t)
	file := writeFile(t, "authn.yaml", authenticationConfig(iss, "miniapiserver"))
	srv := testserver.Start(t, func(o *app.Options) {
		o.Auth.Authentication.ConfigFile = file
		o.Auth.Authorization.ConfigReloadInterval = 100 * time.Millisecond
	})
	valid := iss.sign(t, iss.claims("miniapiserver"), false)
	waitForIssuer(t, srv, valid)

	t.Run("mapped user", func(t *testing.T) {
		for _, ecdsa := range []bool{false, true} {
			u, err := whoami(srv, iss.sign(t, iss.claims("miniapiserver"), ecdsa))
			if err != nil {
				t.Fatalf("ecdsa %t: %v", ecdsa, err)
			}
			if u.Username != "oidc:jane" || u.UID != "jane" || !slices.Equal(u.Groups, []string{"oidc:devs", "oidc:ops", "system:authenticated"}) ||
				!slices.Equal(u.Extra["example.com/tenant"], []string{"blue"}) {
				t.Errorf("ecdsa %t: user %+v", ecdsa, u)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			token func() string
		}{
			{"wrong audience", func() string { return iss.sign(t, iss.claims("someone-else"), false) }},
			{"wrong issuer", func() string {
				c := iss.claims("miniapiserver")
				c["iss"] = "https://issuer.example.com"
				return iss.sign(t, c, false)
			}},
			{"expired", func() string {
				c := iss.claims("miniapiserver")
				c["iat"], c["nbf"], c["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
				return iss.sign(t, c, false)
			}},
			{"not yet valid", func() string {
				c := iss.claims("miniapiserver")
				c["nbf"] = time.Now().Add(time.Hour).Unix()
				return iss.sign(t, c, true)
			}},
			{"unknown key", func() string { return signWith(t, otherKey, jose.RS256, "rsa", iss.claims("miniapiserver")) }},
			{"claim validation rule", func() string {
				c := iss.claims("miniapiserver")
				c["hd"] = "evil.example.com"
				return iss.sign(t, c, false)
			}},
			{"user validation rule", func() string {
				c := iss.claims("miniapiserver")
				c["sub"] = "system:admin"
				return iss.sign(t, c, false)
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if u, err := whoami(srv, tc.token()); !apierrors.IsUnauthorized(err) {
					t.Errorf("got %+v, %v; want 401", u, err)
				}
			})
		}
	})
	t.Run("anonymous only for /livez", func(t *testing.T) {
		transport, err := rest.TransportFor(rest.AnonymousClientConfig(srv.ClientConfig))
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: transport}
		for path, want := range map[string]int{"/livez": http.StatusOK, "/version": http.StatusUnauthorized} {
			resp, err := client.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("anonymous GET %s: %d, want %d", path, resp.StatusCode, want)
			}
		}
	})
	t.Run("kubectl auth whoami", func(t *testing.T) {
		if _, err := exec.LookPath("kubectl"); err != nil {
			t.Skip("kubectl is not on PATH")
		}
		ca := writeFile(t, "ca.crt", string(srv.ClientConfig.CAData))
		out, err := exec.Command("kubectl", "--kubeconfig", os.DevNull, "--server", srv.URL, "--certificate-authority", ca,
			"--token", valid, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").CombinedOutput()
		if err != nil || string(out) != "oidc:jane" {
			t.Errorf("kubectl auth whoami: %s %v", out, err)
		}
	})
	t.Run("reload", func(t *testing.T) {
		if err := os.WriteFile(file, []byte(authenticationConfig(iss, "new-client")), 0o600); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the reloaded configuration", func() error {
			if _, err := whoami(srv, iss.sign(t, iss.claims("new-client"), false)); err != nil {
				return err
			}
			if _, err := whoami(srv, valid); !apierrors.IsUnauthorized(err) {
				return fmt.Errorf("the old audience: %v", err)
			}
			return nil
		})
	})
}

// TestOIDCFlags runs the legacy --oidc-* flags: the email claim (no
// prefix, email_verified required), groups with a prefix, a required
// claim, and the signing algorithms allowed.
func TestOIDCFlags(t *testing.T) {
	t.Parallel()
	iss := startIssuer(t)
	srv := testserver.Start(t, func(o *app.Options) {
		o.Auth.Authentication.OIDC = app.OIDCOptions{
			IssuerURL: iss.url, ClientID: "kubectl", CAFile: writeFile(t, "issuer-ca.crt", string(iss.server.CAPEM)),
			UsernameClaim: "email", GroupsClaim: "groups", GroupsPrefix: "oidc:",
			SigningAlgs: []string{"RS256"}, RequiredClaims: map[string]string{"hd": "example.com"},
		}
	})
	valid := iss.sign(t, iss.claims("kubectl"), false)
	waitForIssuer(t, srv, valid)
	u, err := whoami(srv, valid)
	if err != nil || u.Username != "jane@example.com" || !slices.Equal(u.Groups, []string{"oidc:devs", "oidc:ops", "system:authenticated"}) {
		t.Errorf("got %+v, %v", u, err)
	}
	for name, change := range map[string]func(map[string]any){
		"email not verified":     func(c map[string]any) { c["email_verified"] = false },
		"required claim missing": func(c map[string]any) { delete(c, "hd") },
		"wrong audience":         func(c map[string]any) { c["aud"] = "other" },
	} {
		c := iss.claims("kubectl")
		change(c)
		if u, err := whoami(srv, iss.sign(t, c, false)); !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: got %+v, %v; want 401", name, u, err)
		}
	}
	// ES256 is not among --oidc-signing-algs.
	if u, err := whoami(srv, iss.sign(t, iss.claims("kubectl"), true)); !apierrors.IsUnauthorized(err) || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("ES256: got %+v, %v; want 401", u, err)
	}
}
