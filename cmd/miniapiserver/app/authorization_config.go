package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverv1alpha1 "k8s.io/apiserver/pkg/apis/apiserver/v1alpha1"
	configvalidation "k8s.io/apiserver/pkg/apis/apiserver/validation"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
)

// authorizationConfiguration is the chain --authorization-config
// describes (and the file's bytes), or the one kube makes of
// --authorization-mode and the webhook flags (no bytes).
func (o *AuthOptions) authorizationConfiguration(compiler authorizationcel.Compiler) (*apiserverconfig.AuthorizationConfiguration, []byte, error) {
	a := &o.Authorization
	if a.ConfigFile != "" {
		data, err := os.ReadFile(a.ConfigFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--authorization-config: %w", err)
		}
		cfg, err := loadAuthorizationConfiguration(data, compiler, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("--authorization-config: %w", err)
		}
		return cfg, data, nil
	}
	modes, err := authz.ParseModes(o.AuthorizationModes)
	if err != nil {
		return nil, nil, fmt.Errorf("--authorization-mode: %w", err)
	}
	cfg := &apiserverconfig.AuthorizationConfiguration{}
	for _, m := range modes {
		c := apiserverconfig.AuthorizerConfiguration{Type: apiserverconfig.AuthorizerType(m), Name: m.Name()}
		if m == authz.ModeWebhook {
			// As kube: the flags' webhook is "default", with the 30s timeout
			// and NoOpinion failure policy the structured form requires.
			file := a.WebhookConfigFile
			c.Name = "default"
			c.Webhook = &apiserverconfig.WebhookConfiguration{
				AuthorizedTTL:              metav1.Duration{Duration: a.WebhookCacheAuthorizedTTL},
				CacheAuthorizedRequests:    a.WebhookCacheAuthorizedTTL != 0,
				UnauthorizedTTL:            metav1.Duration{Duration: a.WebhookCacheUnauthorizedTTL},
				CacheUnauthorizedRequests:  a.WebhookCacheUnauthorizedTTL != 0,
				Timeout:                    metav1.Duration{Duration: 30 * time.Second},
				FailurePolicy:              apiserverconfig.FailurePolicyNoOpinion,
				SubjectAccessReviewVersion: a.WebhookVersion,
				ConnectionInfo: apiserverconfig.WebhookConnectionInfo{
					Type: apiserverconfig.AuthorizationWebhookConnectionInfoTypeKubeConfigFile, KubeConfigFile: &file,
				},
			}
		}
		cfg.Authorizers = append(cfg.Authorizers, c)
	}
	return cfg, nil, nil
}

// decodeAuthorizationConfiguration decodes the file strictly, as kube's
// reader (k8s.io/apiserver/pkg/apis/apiserver/load) does, but with the
// scheme built on first use: that package builds its own at every start.
// Empty data is the defaulted v1alpha1 configuration, as there.
func decodeAuthorizationConfiguration(data []byte) (*apiserverconfig.AuthorizationConfiguration, error) {
	scheme := apiserverConfigScheme()
	cfg := &apiserverconfig.AuthorizationConfiguration{}
	if len(data) == 0 {
		empty := &apiserverv1alpha1.AuthorizationConfiguration{}
		scheme.Default(empty)
		if err := scheme.Convert(empty, cfg, nil); err != nil {
			return nil, err
		}
		return cfg, nil
	}
	obj, err := runtime.Decode(serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*apiserverconfig.AuthorizationConfiguration)
	if !ok {
		return nil, fmt.Errorf("expected AuthorizationConfiguration, got %T", obj)
	}
	return cfg, nil
}

// loadAuthorizationConfiguration decodes and validates an
// AuthorizationConfiguration as kube does: kube's validation, then every
// authorizer but the webhooks named after its type in lower case, and (on
// reload) the required types still there.
func loadAuthorizationConfiguration(data []byte, compiler authorizationcel.Compiler, required sets.Set[apiserverconfig.AuthorizerType]) (*apiserverconfig.AuthorizationConfiguration, error) {
	cfg, err := decodeAuthorizationConfiguration(data)
	if err != nil {
		return nil, fmt.Errorf("failed to load AuthorizationConfiguration from file: %w", err)
	}
	known := sets.New[string]()
	for _, m := range authz.KnownModes() {
		known.Insert(string(m))
	}
	if errs := configvalidation.ValidateAuthorizationConfiguration(compiler, nil, cfg, known, sets.New(string(authz.ModeWebhook))); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	var errs []error
	seen := sets.New[apiserverconfig.AuthorizerType]()
	for _, a := range cfg.Authorizers {
		if a.Type == apiserverconfig.TypeWebhook {
			continue
		}
		seen.Insert(a.Type)
		if want := strings.ToLower(string(a.Type)); a.Name != want {
			errs = append(errs, fmt.Errorf("expected name %s for authorizer %s instead of %s", want, a.Type, a.Name))
		}
	}
	if missing := required.Difference(seen); missing.Len() > 0 {
		errs = append(errs, fmt.Errorf("missing required types: %v", sets.List(missing)))
	}
	return cfg, utilerrors.NewAggregate(errs)
}

// authorizerBuilder makes chains of configurations. The Node and RBAC
// authorizers are made once, for the types of the first configuration, and
// shared by every chain after it, as kube's: a reloaded configuration may
// neither add nor drop them.
type authorizerBuilder struct {
	node     *authz.Node
	rbac     *authz.RBAC
	extra    []authz.Named
	compiler authorizationcel.Compiler
}

// build makes the chain of cfg (behind system:masters, see authz.New),
// the extra authorizers of embedding programs last, and the union of its
// rule resolvers.
func (b *authorizerBuilder) build(cfg *apiserverconfig.AuthorizationConfiguration) (authorizer.Authorizer, authorizer.RuleResolver, error) {
	if len(cfg.Authorizers) == 0 {
		return nil, nil, errors.New("at least one authorization mode must be passed")
	}
	var (
		chain     []authz.Named
		resolvers authz.RuleResolvers
	)
	for _, c := range cfg.Authorizers {
		var a interface {
			authorizer.Authorizer
			authorizer.RuleResolver
		}
		switch authz.Mode(c.Type) {
		case authz.ModeAlwaysAllow:
			a = authz.AlwaysAllow{}
		case authz.ModeAlwaysDeny:
			a = authz.AlwaysDeny{}
		case authz.ModeRBAC:
			if b.rbac == nil {
				return nil, nil, notAtStartup(c.Type)
			}
			a = b.rbac
		case authz.ModeNode:
			if b.node == nil {
				return nil, nil, notAtStartup(c.Type)
			}
			a = b.node
		case authz.ModeWebhook:
			w, err := b.webhook(c)
			if err != nil {
				return nil, nil, err
			}
			a = w
		default:
			return nil, nil, fmt.Errorf("unknown authorization mode %s specified", c.Type)
		}
		chain = append(chain, authz.Named{Name: c.Name, Authorizer: a})
		resolvers = append(resolvers, a)
	}
	chain = append(chain, b.extra...)
	return authz.New(chain...), resolvers, nil
}

func notAtStartup(t apiserverconfig.AuthorizerType) error {
	return fmt.Errorf("authorizer type %s is not allowed if it was not enabled at initial server startup", t)
}

// webhook makes the Webhook authorizer c configures.
func (b *authorizerBuilder) webhook(c apiserverconfig.AuthorizerConfiguration) (*authz.Webhook, error) {
	w := c.Webhook
	if w.ConnectionInfo.Type != apiserverconfig.AuthorizationWebhookConnectionInfoTypeKubeConfigFile || w.ConnectionInfo.KubeConfigFile == nil {
		// kube-apiserver runs outside the cluster it serves.
		return nil, fmt.Errorf("authorizer %s: connectionInfo type %s is not supported by kube-apiserver", c.Name, w.ConnectionInfo.Type)
	}
	client, err := webhookutil.LoadKubeconfig(*w.ConnectionInfo.KubeConfigFile, nil)
	if err != nil {
		return nil, fmt.Errorf("authorizer %s: %w", c.Name, err)
	}
	if w.Timeout.Duration != 0 {
		client.Timeout = w.Timeout.Duration
	}
	cfg := authz.WebhookConfig{
		Name: c.Name, Client: client, Version: w.SubjectAccessReviewVersion,
		DecisionOnError: authorizer.DecisionNoOpinion, MatchConditions: w.MatchConditions, Compiler: b.compiler,
	}
	switch w.FailurePolicy {
	case apiserverconfig.FailurePolicyNoOpinion:
	case apiserverconfig.FailurePolicyDeny:
		cfg.DecisionOnError = authorizer.DecisionDeny
	default:
		return nil, fmt.Errorf("unknown failurePolicy %q", w.FailurePolicy)
	}
	if w.CacheAuthorizedRequests {
		cfg.AuthorizedTTL = w.AuthorizedTTL.Duration
	}
	if w.CacheUnauthorizedRequests {
		cfg.UnauthorizedTTL = w.UnauthorizedTTL.Duration
	}
	return authz.NewWebhook(cfg)
}

// authorizationReloader reads --authorization-config again every interval
// and, when it changed into a valid configuration whose chain can be
// built, makes that the server's chain; otherwise the chain in force stays
// and the error is logged, as kube's.
type authorizationReloader struct {
	file     string
	interval time.Duration
	builder  *authorizerBuilder
	target   *authz.Reloadable
	// required are the types other than Webhook of the first
	// configuration, which every later one keeps.
	required   sets.Set[apiserverconfig.AuthorizerType]
	lastData   []byte
	lastConfig *apiserverconfig.AuthorizationConfiguration
}

// run checks the file until ctx ends.
func (r *authorizationReloader) run(ctx context.Context) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.check()
		}
	}
}

func (r *authorizationReloader) check() {
	data, err := os.ReadFile(r.file)
	if err != nil {
		slog.Error("reloading authorization config", "error", err)
		return
	}
	if bytes.Equal(data, r.lastData) {
		return
	}
	r.lastData = data
	cfg, err := loadAuthorizationConfiguration(data, r.builder.compiler, r.required)
	if err != nil {
		slog.Error("reloading authorization config", "error", err)
		return
	}
	if reflect.DeepEqual(cfg, r.lastConfig) {
		return
	}
	r.lastConfig = cfg
	a, resolver, err := r.builder.build(cfg)
	if err != nil {
		slog.Error("reloading authorization config", "error", err)
		return
	}
	r.target.Set(a, resolver)
	slog.Info("reloaded authorization config", "file", r.file)
}
