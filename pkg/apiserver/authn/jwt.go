package authn

import (
	"context"
	"sync/atomic"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"
)

// JWTConfig configures the JWT authenticators of an
// AuthenticationConfiguration (or of the --oidc-* flags).
type JWTConfig struct {
	// SigningAlgs are the JOSE algorithms tokens may be signed with
	// (kube's --oidc-signing-algs; all of oidc.AllValidSigningAlgorithms
	// with --authentication-config).
	SigningAlgs []string
	// APIAudiences are this API's audiences, which a token's audience is
	// checked against when its authenticator does not check one itself.
	APIAudiences authenticator.Audiences
	// DisallowedIssuers are the service account issuers, which no JWT
	// authenticator may name.
	DisallowedIssuers []string
	// Compiler compiles the CEL of claim mappings and validation rules; nil
	// builds the default one when there is a JWT authenticator (a CEL
	// environment costs megabytes).
	Compiler authenticationcel.Compiler
}

// JWTs are the JWT authenticators of an AuthenticationConfiguration, with
// kube's verification of ID tokens (k8s.io/apiserver's oidc package:
// discovery and keys fetched from the issuer over HTTPS, exp, nbf, iat,
// aud, iss, email_verified, claim mappings, CEL rules). The set can be
// replaced while the server serves (Update): each token is checked by the
// set current when it arrives. Safe for concurrent use.
type JWTs struct {
	lifetime context.Context
	cfg      JWTConfig
	current  atomic.Pointer[jwtSet]
}

type jwtSet struct {
	token  authenticator.Token
	health func() error
	cancel context.CancelFunc
}

var _ authenticator.Token = (*JWTs)(nil)

// NewJWTs builds the authenticators of jwts; their issuers' documents are
// fetched in the background until lifetime ends (a token is refused until
// its issuer's keys are known).
func NewJWTs(lifetime context.Context, jwts []apiserverconfig.JWTAuthenticator, cfg JWTConfig) (*JWTs, error) {
	j := &JWTs{lifetime: lifetime, cfg: cfg}
	set, err := j.build(jwts)
	if err != nil {
		return nil, err
	}
	j.current.Store(set)
	return j, nil
}

// build is called by NewJWTs, then by Update (one call at a time).
func (j *JWTs) build(jwts []apiserverconfig.JWTAuthenticator) (_ *jwtSet, err error) {
	if len(jwts) > 0 && j.cfg.Compiler == nil {
		j.cfg.Compiler = authenticationcel.NewDefaultCompiler()
	}
	ctx, cancel := context.WithCancel(j.lifetime)
	defer func() {
		if err != nil {
			cancel()
		}
	}()
	var (
		tokens failOnErrorTokens
		checks []func() error
	)
	for _, a := range jwts {
		opts := oidc.Options{
			JWTAuthenticator: a, SupportedSigningAlgs: j.cfg.SigningAlgs,
			DisallowedIssuers: j.cfg.DisallowedIssuers, Compiler: j.cfg.Compiler,
		}
		if a.Issuer.CertificateAuthority != "" {
			opts.CAContentProvider = staticCA(a.Issuer.CertificateAuthority)
		}
		t, err := oidc.New(ctx, opts)
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, t)
		checks = append(checks, t.HealthCheck)
	}
	return &jwtSet{
		token: authenticator.WrapAudienceAgnosticToken(j.cfg.APIAudiences, tokens),
		health: func() error {
			var errs []error
			for _, c := range checks {
				if err := c(); err != nil {
					errs = append(errs, err)
				}
			}
			return utilerrors.NewAggregate(errs)
		},
		cancel: cancel,
	}, nil
}

// AuthenticateToken implements authenticator.Token.
func (j *JWTs) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	return j.current.Load().token.AuthenticateToken(ctx, token)
}

// Update replaces the authenticators with those of jwts once every new
// one has fetched its issuer's keys (or fails with the last health error
// when ctx ends first, keeping the old set). The old set keeps fetching
// for a minute, for the requests still using it, as kube's.
func (j *JWTs) Update(ctx context.Context, jwts []apiserverconfig.JWTAuthenticator) error {
	set, err := j.build(jwts)
	if err != nil {
		return err
	}
	var healthErr error
	waitErr := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		healthErr = set.health()
		return healthErr == nil, nil
	})
	if healthErr != nil || waitErr != nil {
		set.cancel()
		return utilerrors.NewAggregate([]error{healthErr, waitErr})
	}
	old := j.current.Swap(set)
	time.AfterFunc(time.Minute, old.cancel)
	return nil
}

// staticCA is the PEM of the CAs an issuer's certificate is verified with.
type staticCA string

func (c staticCA) CurrentCABundleContent() []byte { return []byte(c) }

// failOnErrorTokens asks each authenticator in turn and stops at the first
// that knows the token or fails on it (kube's fail-on-error union: a token
// one issuer refuses is not tried on the others).
type failOnErrorTokens []authenticator.Token

func (u failOnErrorTokens) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	for _, a := range u {
		resp, ok, err := a.AuthenticateToken(ctx, token)
		if err != nil || ok {
			return resp, ok, err
		}
	}
	return nil, false, nil
}
