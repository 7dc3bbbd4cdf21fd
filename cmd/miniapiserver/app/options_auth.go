package app

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
)

// DefaultServiceAccountIssuer is the issuer of service account tokens
// when --service-account-issuer is not set (kubeadm's and kind's).
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// AuthOptions are the flags of authentication, authorization and the
// in-flight limits, with kube-apiserver's names, defaults and meaning.
type AuthOptions struct {
	ClientCAFile  string
	AnonymousAuth bool

	AuthorizationModes []string
	// Authorization are the webhook's flags and --authorization-config.
	Authorization AuthorizationOptions
	// Authentication are --authentication-config and the --oidc-* flags.
	Authentication AuthenticationOptions
	// ExtraAuthorizers follow the --authorization-mode ones in the chain:
	// for programs and tests that embed the server (not a flag).
	ExtraAuthorizers []authz.Named

	ServiceAccountIssuers               []string
	ServiceAccountKeyFiles              []string
	ServiceAccountSigningKeyFile        string
	ServiceAccountJWKSURI               string
	APIAudiences                        []string
	ServiceAccountMaxTokenExpiration    time.Duration
	ServiceAccountExtendTokenExpiration bool
	ServiceAccountLookup                bool

	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// EnablePriorityAndFairness limits requests by API Priority and
	// Fairness (their sum its seats) instead of the two limits apart.
	EnablePriorityAndFairness bool

	RequestHeader RequestHeaderOptions
	ProxyClient   ProxyClientOptions
	// EnableBootstrapTokenAuth authenticates kube-system's bootstrap
	// token Secrets (kubeadm's TLS bootstrap).
	EnableBootstrapTokenAuth bool
}

// defaultAuthOptions are kube's defaults (--authorization-mode: RBAC).
func defaultAuthOptions() AuthOptions {
	return AuthOptions{
		AnonymousAuth:                       true,
		AuthorizationModes:                  []string{string(authz.ModeRBAC)},
		Authorization:                       defaultAuthorizationOptions(),
		Authentication:                      defaultAuthenticationOptions(),
		ServiceAccountExtendTokenExpiration: true,
		ServiceAccountLookup:                true,
		MaxRequestsInflight:                 400,
		MaxMutatingRequestsInflight:         200,
		EnablePriorityAndFairness:           true,
		ProxyClient:                         ProxyClientOptions{EnableAggregatorRouting: true, RejectForwardingRedirects: true},
	}
}

func (o *AuthOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile,
		"Client certificates signed by these CAs (PEM) authenticate as their common name, in their organizations as groups. Without it, a client CA is generated in --data-dir, and signs the admin certificate of the generated kubeconfig.")
	fs.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth,
		"Requests without credentials are system:anonymous in system:unauthenticated (authorization decides what they may do); false answers them 401.")
	modes := make([]string, len(authz.KnownModes()))
	for i, m := range authz.KnownModes() {
		modes[i] = string(m)
	}
	fs.StringSliceVar(&o.AuthorizationModes, "authorization-mode", o.AuthorizationModes,
		"Ordered list of authorizers, comma separated, of: "+strings.Join(modes, ",")+". Users in system:masters may always do everything. Not with --authorization-config.")
	fs.StringArrayVar(&o.ServiceAccountIssuers, "service-account-issuer", o.ServiceAccountIssuers,
		"Issuer of service account tokens (repeatable): the first names the tokens issued, all are accepted. Default "+DefaultServiceAccountIssuer+".")
	fs.StringArrayVar(&o.ServiceAccountKeyFiles, "service-account-key-file", o.ServiceAccountKeyFiles,
		"PEM file of RSA or ECDSA keys (public or private) that verify service account tokens (repeatable). The signing key's public half is always one of them.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile,
		"Private key (PEM) that signs the tokens of the TokenRequest API. Without it, a key is generated in --data-dir.")
	fs.StringVar(&o.ServiceAccountJWKSURI, "service-account-jwks-uri", o.ServiceAccountJWKSURI,
		"jwks_uri of /.well-known/openid-configuration (default: https://<this server>/openid/v1/jwks).")
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences,
		"Audiences of this API: service account tokens must name one. Default: the first --service-account-issuer.")
	fs.DurationVar(&o.ServiceAccountMaxTokenExpiration, "service-account-max-token-expiration", o.ServiceAccountMaxTokenExpiration,
		"Longest validity of a token the TokenRequest API issues; longer requests are shortened (0: 2^32 seconds).")
	fs.BoolVar(&o.ServiceAccountExtendTokenExpiration, "service-account-extend-token-expiration", o.ServiceAccountExtendTokenExpiration,
		"Tokens kubelet requests for pods (3607 s) are valid a year, with a warning after their requested time, as kube does during the move to bound tokens.")
	fs.BoolVar(&o.ServiceAccountLookup, "service-account-lookup", o.ServiceAccountLookup,
		"Check that the secret and service account of a legacy token still exist.")
	fs.IntVar(&o.MaxRequestsInflight, "max-requests-inflight", o.MaxRequestsInflight,
		"With --enable-priority-and-fairness, part of the server's seats (with --max-mutating-requests-inflight). Without, the most read-only requests served at once (watches and other long-running requests not counted), shared fairly between users; past it, 429. 0: no limit.")
	fs.IntVar(&o.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInflight,
		"With --enable-priority-and-fairness, part of the server's seats (with --max-requests-inflight). Without, the most mutating requests served at once, shared fairly between users; past it, 429. 0: no limit.")
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness,
		"Limit and queue requests by API Priority and Fairness (the FlowSchemas and PriorityLevelConfigurations of flowcontrol.apiserver.k8s.io); false applies --max-requests-inflight and --max-mutating-requests-inflight apart.")
	fs.BoolVar(&o.EnableBootstrapTokenAuth, "enable-bootstrap-token-auth", o.EnableBootstrapTokenAuth,
		"Bootstrap tokens (Secrets of type bootstrap.kubernetes.io/token in kube-system) authenticate as system:bootstrap:<token id> in system:bootstrappers, for kubeadm's TLS bootstrap.")
	o.RequestHeader.addFlags(fs)
	o.ProxyClient.addFlags(fs)
	o.Authorization.addFlags(fs)
	o.Authentication.addFlags(fs)
}

func (o *AuthOptions) validate() error {
	if err := o.Authorization.validate(o.AuthorizationModes); err != nil {
		return err
	}
	if err := o.Authentication.validate(); err != nil {
		return err
	}
	if o.ClientCAFile != "" {
		if _, err := os.Stat(o.ClientCAFile); err != nil {
			return fmt.Errorf("--client-ca-file: %v", err)
		}
	}
	seen := map[string]bool{}
	for _, iss := range o.ServiceAccountIssuers {
		switch {
		case iss == "":
			return errors.New("--service-account-issuer: should not be an empty string")
		case seen[iss]:
			return fmt.Errorf("--service-account-issuer: %q is already specified", iss)
		}
		if strings.Contains(iss, ":") {
			if _, err := url.Parse(iss); err != nil {
				return fmt.Errorf("--service-account-issuer: %q contained a ':' but was not a valid URL: %v", iss, err)
			}
		}
		seen[iss] = true
	}
	if o.ServiceAccountSigningKeyFile != "" && len(o.ServiceAccountKeyFiles) == 0 {
		return errors.New("--service-account-key-file: must be specified when --service-account-signing-key-file is provided")
	}
	if o.ServiceAccountJWKSURI != "" {
		if u, err := url.Parse(o.ServiceAccountJWKSURI); err != nil {
			return fmt.Errorf("--service-account-jwks-uri: must be a valid URL: %v", err)
		} else if u.Scheme != "https" {
			return fmt.Errorf("--service-account-jwks-uri: requires https scheme, parsed as: %v", u)
		}
	}
	if m := o.ServiceAccountMaxTokenExpiration; m != 0 && (m < time.Hour || m > time.Duration(1<<32)*time.Second) {
		return errors.New("--service-account-max-token-expiration: must be between 1 hour and 2^32 seconds")
	}
	if o.MaxRequestsInflight < 0 {
		return errors.New("--max-requests-inflight: must not be negative")
	}
	if o.MaxMutatingRequestsInflight < 0 {
		return errors.New("--max-mutating-requests-inflight: must not be negative")
	}
	if o.EnablePriorityAndFairness && o.MaxRequestsInflight+o.MaxMutatingRequestsInflight <= 0 {
		return fmt.Errorf("--enable-priority-and-fairness: --max-requests-inflight=%d and --max-mutating-requests-inflight=%d must add up to something positive",
			o.MaxRequestsInflight, o.MaxMutatingRequestsInflight)
	}
	return o.RequestHeader.validate()
}

// issuers are the accepted issuers, the first naming new tokens.
func (o *AuthOptions) issuers() []string {
	if len(o.ServiceAccountIssuers) == 0 {
		return []string{DefaultServiceAccountIssuer}
	}
	return o.ServiceAccountIssuers
}

// apiAudiences are --api-audiences, or the first issuer.
func (o *AuthOptions) apiAudiences() []string {
	if len(o.APIAudiences) == 0 {
		return o.issuers()[:1]
	}
	return o.APIAudiences
}
