package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
)

// TestAuthenticationFlags: --authentication-config and --oidc-* are
// checked and turned into a JWT authenticator as kube does (messages of
// kube-apiserver 1.37.2).
func TestAuthenticationFlags(t *testing.T) {
	dir := t.TempDir()
	file := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"
	anonymous := file("anon.yaml", header+"anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n")
	saIssuer := file("sa.yaml", header+"jwt:\n- issuer:\n    url: "+DefaultServiceAccountIssuer+"\n    audiences: [x]\n  claimMappings:\n    username:\n      claim: sub\n      prefix: \"\"\n")
	for _, tc := range []struct {
		name       string
		args       []string
		wantErr    string
		wantPrefix string // the username prefix of the flags' authenticator
	}{
		{name: "none"},
		{name: "issuer without client", args: []string{"--oidc-issuer-url=https://issuer.example.com"},
			wantErr: "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"},
		{name: "a claim flag alone", args: []string{"--oidc-username-claim=sub"},
			wantErr: "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"},
		{name: "config and oidc", args: []string{"--authentication-config=" + anonymous, "--oidc-groups-claim=groups"},
			wantErr: "authentication-config file and oidc-* flags are mutually exclusive"},
		{name: "sub, issuer prefix", args: []string{"--oidc-issuer-url=https://issuer.example.com", "--oidc-client-id=c"}, wantPrefix: "https://issuer.example.com#"},
		{name: "email, no prefix", args: []string{"--oidc-issuer-url=https://issuer.example.com", "--oidc-client-id=c", "--oidc-username-claim=email"}},
		{name: "prefix -", args: []string{"--oidc-issuer-url=https://issuer.example.com", "--oidc-client-id=c", "--oidc-username-prefix=-"}},
		{name: "prefix given", args: []string{"--oidc-issuer-url=https://issuer.example.com", "--oidc-client-id=c", "--oidc-username-prefix=o:"}, wantPrefix: "o:"},
		{name: "http issuer", args: []string{"--oidc-issuer-url=http://issuer.example.com", "--oidc-client-id=c"}, wantErr: "URL scheme must be https"},
		{name: "anonymous in the file", args: []string{"--authentication-config=" + anonymous}},
		{name: "anonymous in the file and the flag", args: []string{"--authentication-config=" + anonymous, "--anonymous-auth=false"},
			wantErr: "--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file"},
		{name: "a service account issuer", args: []string{"--authentication-config=" + saIssuer}, wantErr: "URL must not overlap with disallowed issuers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultAuthOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.addFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.validate()
			if err == nil {
				cfg, _, _, buildErr := o.authenticationConfiguration(authenticationcel.NewDefaultCompiler)
				err = buildErr
				if err == nil && o.Authentication.OIDC.IssuerURL != "" {
					if got := *cfg.JWT[0].ClaimMappings.Username.Prefix; got != tc.wantPrefix {
						t.Errorf("username prefix %q, want %q", got, tc.wantPrefix)
					}
				}
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}
