package app

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/pflag"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	configvalidation "k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/utils/ptr"
)

// AuthenticationOptions are kube-apiserver's flags of the JWT
// authenticators: the structured --authentication-config, or the legacy
// --oidc-* flags of one OpenID issuer.
type AuthenticationOptions struct {
	// ConfigFile is kube's AuthenticationConfiguration
	// (apiserver.config.k8s.io/v1): jwt authenticators and anonymous
	// requests; its jwt authenticators are read again when it changes.
	ConfigFile string
	OIDC       OIDCOptions

	// changed tells whether a flag was given (nil when the options were
	// not parsed from flags).
	changed func(name string) bool
}

// OIDCOptions are kube's --oidc-* flags.
type OIDCOptions struct {
	IssuerURL, ClientID, CAFile   string
	UsernameClaim, UsernamePrefix string
	GroupsClaim, GroupsPrefix     string
	SigningAlgs                   []string
	RequiredClaims                map[string]string
}

var oidcFlags = []string{"oidc-issuer-url", "oidc-client-id", "oidc-ca-file", "oidc-username-claim", "oidc-username-prefix",
	"oidc-groups-claim", "oidc-groups-prefix", "oidc-signing-algs", "oidc-required-claim"}

// defaultAuthenticationOptions are kube's defaults.
func defaultAuthenticationOptions() AuthenticationOptions {
	return AuthenticationOptions{OIDC: OIDCOptions{UsernameClaim: "sub", SigningAlgs: []string{"RS256"}}}
}

func (o *AuthenticationOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "authentication-config", o.ConfigFile,
		"kube's AuthenticationConfiguration (apiserver.config.k8s.io/v1): JWT authenticators of OpenID issuers and the anonymous authenticator. Mutually exclusive with --oidc-*, and with --anonymous-auth if it configures anonymous requests.")
	fs.StringVar(&o.OIDC.IssuerURL, "oidc-issuer-url", o.OIDC.IssuerURL,
		"URL of the OpenID issuer (https only): its ID tokens (JWTs) authenticate, verified with the keys of its discovery document.")
	fs.StringVar(&o.OIDC.ClientID, "oidc-client-id", o.OIDC.ClientID,
		"The client ID tokens must be issued to (their audience); required with --oidc-issuer-url.")
	fs.StringVar(&o.OIDC.CAFile, "oidc-ca-file", o.OIDC.CAFile,
		"CAs (PEM) the issuer's serving certificate is verified with (default: the host's roots).")
	fs.StringVar(&o.OIDC.UsernameClaim, "oidc-username-claim", o.OIDC.UsernameClaim,
		"The claim that is the user name. Claims other than sub may be neither unique nor immutable; email requires email_verified.")
	fs.StringVar(&o.OIDC.UsernamePrefix, "oidc-username-prefix", o.OIDC.UsernamePrefix,
		"Prefix of user names. Default: '<issuer URL>#', except for the email claim (none); '-' for none.")
	fs.StringVar(&o.OIDC.GroupsClaim, "oidc-groups-claim", o.OIDC.GroupsClaim,
		"The claim (a string or an array of strings) that lists the user's groups.")
	fs.StringVar(&o.OIDC.GroupsPrefix, "oidc-groups-prefix", o.OIDC.GroupsPrefix, "Prefix of group names.")
	fs.StringSliceVar(&o.OIDC.SigningAlgs, "oidc-signing-algs", o.OIDC.SigningAlgs,
		"JOSE algorithms tokens may be signed with: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512.")
	fs.Var(cliflag.NewMapStringStringNoSplit(&o.OIDC.RequiredClaims), "oidc-required-claim",
		"key=value: a claim the ID token must have, with that value (repeatable).")
	o.changed = fs.Changed
}

// oidcSet tells whether an --oidc-* flag was given, on the command line or
// (for embedding programs) as a value other than the default.
func (o *AuthenticationOptions) oidcSet() bool {
	if o.changed != nil && slices.ContainsFunc(oidcFlags, o.changed) {
		return true
	}
	d, c := defaultAuthenticationOptions().OIDC, o.OIDC
	return c.IssuerURL != "" || c.ClientID != "" || c.CAFile != "" || c.UsernameClaim != d.UsernameClaim || c.UsernamePrefix != "" ||
		c.GroupsClaim != "" || c.GroupsPrefix != "" || !slices.Equal(c.SigningAlgs, d.SigningAlgs) || len(c.RequiredClaims) > 0
}

func (o *AuthenticationOptions) validate() error {
	if o.ConfigFile == "" {
		if o.oidcSet() && (o.OIDC.IssuerURL == "" || o.OIDC.ClientID == "") {
			return errors.New("--oidc-*: oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set")
		}
		return nil
	}
	if o.oidcSet() {
		return errors.New("--authentication-config: authentication-config file and oidc-* flags are mutually exclusive")
	}
	return nil
}

// authenticationConfiguration is the configuration of
// --authentication-config (and the file's bytes), or the one kube makes
// of the --oidc-* flags, validated as kube does (no JWT authenticator may
// name a service account issuer); signingAlgs are the algorithms tokens
// may use (all, with the file). compiler is asked for only when there
// are JWT authenticators to validate.
func (o *AuthOptions) authenticationConfiguration(compiler func() authenticationcel.Compiler) (cfg *apiserverconfig.AuthenticationConfiguration, data []byte, signingAlgs []string, err error) {
	a := &o.Authentication
	if a.ConfigFile != "" {
		if data, err = os.ReadFile(a.ConfigFile); err == nil {
			cfg, err = decodeAuthenticationConfiguration(data)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--authentication-config: failed to load authentication configuration from file %q: %w", a.ConfigFile, err)
		}
		signingAlgs = oidc.AllValidSigningAlgorithms()
	} else {
		cfg = &apiserverconfig.AuthenticationConfiguration{}
		if a.OIDC.IssuerURL != "" && a.OIDC.ClientID != "" {
			jwt, err := a.OIDC.jwtAuthenticator()
			if err != nil {
				return nil, nil, nil, err
			}
			cfg.JWT = []apiserverconfig.JWTAuthenticator{jwt}
		}
		signingAlgs = a.OIDC.SigningAlgs
	}
	if cfg.Anonymous != nil && a.changed != nil && a.changed("anonymous-auth") {
		return nil, nil, nil, errors.New("--anonymous-auth: anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file")
	}
	var c authenticationcel.Compiler
	if len(cfg.JWT) > 0 {
		c = compiler()
	}
	if err := configvalidation.ValidateAuthenticationConfiguration(c, cfg, o.issuers()).ToAggregate(); err != nil {
		flag := "--oidc-*"
		if a.ConfigFile != "" {
			flag = "--authentication-config"
		}
		return nil, nil, nil, fmt.Errorf("%s: %w", flag, err)
	}
	return cfg, data, signingAlgs, nil
}

// jwtAuthenticator is the JWT authenticator kube makes of the flags.
func (o *OIDCOptions) jwtAuthenticator() (apiserverconfig.JWTAuthenticator, error) {
	prefix := o.UsernamePrefix
	switch {
	case prefix == "" && o.UsernameClaim != "email":
		// kube's legacy rule: names other than emails are prefixed with the
		// issuer, so that they cannot clash with other users.
		prefix = o.IssuerURL + "#"
	case prefix == "-":
		prefix = ""
	}
	jwt := apiserverconfig.JWTAuthenticator{
		Issuer: apiserverconfig.Issuer{URL: o.IssuerURL, Audiences: []string{o.ClientID}},
		ClaimMappings: apiserverconfig.ClaimMappings{
			Username: apiserverconfig.PrefixedClaimOrExpression{Prefix: ptr.To(prefix), Claim: o.UsernameClaim},
		},
	}
	if o.GroupsClaim != "" {
		jwt.ClaimMappings.Groups = apiserverconfig.PrefixedClaimOrExpression{Prefix: ptr.To(o.GroupsPrefix), Claim: o.GroupsClaim}
	}
	if o.CAFile != "" {
		ca, err := os.ReadFile(o.CAFile)
		if err != nil {
			return jwt, fmt.Errorf("--oidc-ca-file: %w", err)
		}
		jwt.Issuer.CertificateAuthority = string(ca)
	}
	for claim, value := range o.RequiredClaims {
		jwt.ClaimValidationRules = append(jwt.ClaimValidationRules, apiserverconfig.ClaimValidationRule{Claim: claim, RequiredValue: value})
	}
	return jwt, nil
}

// decodeAuthenticationConfiguration decodes the file strictly, as kube.
func decodeAuthenticationConfiguration(data []byte) (*apiserverconfig.AuthenticationConfiguration, error) {
	if len(data) == 0 {
		return nil, errors.New("empty config data")
	}
	obj, err := runtime.Decode(serializer.NewCodecFactory(apiserverConfigScheme(), serializer.EnableStrict).UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*apiserverconfig.AuthenticationConfiguration)
	if !ok {
		return nil, fmt.Errorf("expected AuthenticationConfiguration, got %T", obj)
	}
	return cfg, nil
}
