package app

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"reflect"
	"time"

	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	configvalidation "k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authn"
)

// updateJWTTimeout bounds how long a reloaded configuration's issuers may
// take to serve their keys before the reload is given up (and tried
// again), as kube's.
const updateJWTTimeout = time.Minute

// jwtAuthentication is what --authentication-config (or --oidc-*) gives
// the authentication chain: the JWT authenticators (nil: none), the
// anonymous authenticator's configuration when the file sets one, and the
// reloader of the file (nil: no file).
type jwtAuthentication struct {
	jwts      *authn.JWTs
	anonymous *apiserverconfig.AnonymousAuthConfig
	reloader  *authenticationReloader
}

func newJWTAuthentication(ctx context.Context, o *AuthOptions) (*jwtAuthentication, error) {
	c := &lazyCompiler{}
	cfg, data, algs, err := o.authenticationConfiguration(c.get)
	if err != nil {
		return nil, err
	}
	out := &jwtAuthentication{anonymous: cfg.Anonymous}
	if len(cfg.JWT) == 0 && o.Authentication.ConfigFile == "" {
		return out, nil
	}
	jwtConfig := authn.JWTConfig{SigningAlgs: algs, APIAudiences: o.apiAudiences(), DisallowedIssuers: o.issuers(), Compiler: c.c}
	if out.jwts, err = authn.NewJWTs(ctx, cfg.JWT, jwtConfig); err != nil {
		return nil, err
	}
	if f := o.Authentication.ConfigFile; f != "" {
		out.reloader = &authenticationReloader{
			file: f, interval: o.Authorization.reloadInterval(), jwts: out.jwts, compiler: c,
			issuers: o.issuers(), lastData: data, anonymous: cfg.Anonymous,
		}
	}
	return out, nil
}

// authenticationReloader reads --authentication-config again every
// interval and, when it changed into a valid configuration, replaces the
// JWT authenticators once the new ones have their issuers' keys. The
// anonymous authenticator may not change (kube's rule); a file that cannot
// be decoded or is not valid is not tried again until it changes, one
// whose issuers do not answer is.
type authenticationReloader struct {
	file      string
	interval  time.Duration
	jwts      *authn.JWTs
	issuers   []string
	lastData  []byte
	anonymous *apiserverconfig.AnonymousAuthConfig
	compiler  *lazyCompiler
}

// lazyCompiler builds kube's authentication CEL environment when first
// asked (it costs megabytes; a server without JWT authenticators needs
// none). Not safe for concurrent use.
type lazyCompiler struct{ c authenticationcel.Compiler }

func (l *lazyCompiler) get() authenticationcel.Compiler {
	if l.c == nil {
		l.c = authenticationcel.NewDefaultCompiler()
	}
	return l.c
}

func (r *authenticationReloader) run(ctx context.Context) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.check(ctx)
		}
	}
}

func (r *authenticationReloader) check(ctx context.Context) {
	data, err := os.ReadFile(r.file)
	if err != nil {
		slog.Error("failed to read authentication config file", "error", err)
		return
	}
	if bytes.Equal(data, r.lastData) {
		return
	}
	cfg, err := decodeAuthenticationConfiguration(data)
	if err != nil {
		slog.Error("failed to load authentication config", "error", err)
		r.lastData = data
		return
	}
	var compiler authenticationcel.Compiler
	if len(cfg.JWT) > 0 {
		compiler = r.compiler.get()
	}
	errs := configvalidation.ValidateAuthenticationConfiguration(compiler, cfg, r.issuers)
	if !reflect.DeepEqual(r.anonymous, cfg.Anonymous) {
		slog.Error("failed to validate authentication config", "error", "anonymous: Forbidden: changed from initial configuration file")
		r.lastData = data
		return
	}
	if err := errs.ToAggregate(); err != nil {
		slog.Error("failed to validate authentication config", "error", err)
		r.lastData = data
		return
	}
	uctx, cancel := context.WithTimeout(ctx, updateJWTTimeout)
	defer cancel()
	if err := r.jwts.Update(uctx, cfg.JWT); err != nil {
		slog.Error("failed to update authentication config", "error", err)
		return
	}
	r.lastData = data
	slog.Info("reloaded authentication config", "file", r.file)
}
