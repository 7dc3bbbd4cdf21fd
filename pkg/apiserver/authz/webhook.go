package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/wait"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	configvalidation "k8s.io/apiserver/pkg/apis/apiserver/validation"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"
)

// WebhookConfig configures a Webhook authorizer: one authorizer of type
// Webhook of an AuthorizationConfiguration (the legacy
// --authorization-webhook-* flags make one too).
type WebhookConfig struct {
	// Name is the authorizer's name, for logs.
	Name string
	// Client reaches the webhook: the cluster's server is the URL
	// SubjectAccessReviews are POSTed to, exactly as written, and its
	// user is who this server is to the webhook (a kubeconfig).
	Client *rest.Config
	// Version is the SubjectAccessReview version spoken: v1 or v1beta1.
	Version string
	// AuthorizedTTL and UnauthorizedTTL are how long an allowed, and any
	// other, answer is reused for the same review; 0 caches none.
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// DecisionOnError is the decision when the webhook cannot be asked or
	// its match conditions fail (failurePolicy: NoOpinion or Deny).
	DecisionOnError authorizer.Decision
	// MatchConditions are CEL expressions on the review (as `request`):
	// the webhook is asked only when all are true.
	MatchConditions []apiserverconfig.WebhookMatchCondition
	// Compiler compiles MatchConditions (kube's authorization CEL
	// environment); nil builds the default one.
	Compiler authorizationcel.Compiler
	// RetryBackoff spaces the attempts of a call that failed in a way
	// worth retrying (connection reset, 429, 5xx); zero is kube's (five
	// attempts from 500ms, factor 1.5).
	RetryBackoff wait.Backoff
}

// Webhook is kube's webhook authorizer: it asks a remote service with a
// SubjectAccessReview, remembers the answers for a while, and, when the
// service cannot answer, decides DecisionOnError (by default no opinion,
// so that the next authorizer of the chain decides).
type Webhook struct {
	name            string
	client          *sarClient
	cache           *cache.LRUExpireCache
	authorizedTTL   time.Duration
	unauthorizedTTL time.Duration
	decisionOnError authorizer.Decision
	matcher         *authorizationcel.CELMatcher
	backoff         wait.Backoff
}

var (
	_ authorizer.Authorizer   = (*Webhook)(nil)
	_ authorizer.RuleResolver = (*Webhook)(nil)
)

// webhookCacheSize is how many answers a webhook authorizer remembers
// (kube's).
const webhookCacheSize = 8192

// maxCachedAttributesSize bounds the size of what a requester controls
// (names, paths) in a review that is cached: larger ones may be an attempt
// to fill the cache, and are always asked (kube's bound).
const maxCachedAttributesSize = 10000

// NewWebhook builds the authorizer cfg describes; match conditions that
// do not compile are an error.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	client, err := newSARClient(cfg.Client, cfg.Version)
	if err != nil {
		return nil, err
	}
	compiler := cfg.Compiler
	if compiler == nil && len(cfg.MatchConditions) > 0 {
		compiler = authorizationcel.NewDefaultCompiler()
	}
	matcher, errs := configvalidation.ValidateAndCompileMatchConditions(compiler, cfg.MatchConditions)
	if err := errs.ToAggregate(); err != nil {
		return nil, err
	}
	backoff := cfg.RetryBackoff
	if backoff.Steps == 0 {
		backoff = webhookutil.DefaultRetryBackoffWithInitialDelay(500 * time.Millisecond)
	}
	return &Webhook{
		name: cfg.Name, client: client, cache: cache.NewLRUExpireCache(webhookCacheSize),
		authorizedTTL: cfg.AuthorizedTTL, unauthorizedTTL: cfg.UnauthorizedTTL,
		decisionOnError: cfg.DecisionOnError, matcher: matcher, backoff: backoff,
	}, nil
}

// Authorize implements authorizer.Authorizer: the webhook's answer (from
// the cache when it has one), Allow, Deny or no opinion, with its reason.
func (w *Webhook) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	review := &authorizationv1.SubjectAccessReview{Spec: reviewSpec(a)}
	if w.matcher != nil && w.matcher.CompilationResults != nil {
		match, err := w.matcher.Eval(ctx, review)
		if err != nil {
			return w.decisionOnError, "", err
		}
		if !match {
			return authorizer.DecisionNoOpinion, "", nil
		}
	}
	key, err := json.Marshal(review.Spec)
	if err != nil {
		return w.decisionOnError, "", err
	}
	status, ok := w.cached(string(key))
	if !ok {
		status, err = w.ask(ctx, review)
		if err != nil {
			slog.Warn("authorization webhook: failed to make the request", "authorizer", w.name, "error", err)
			return w.decisionOnError, "", err
		}
		if cacheable(a) {
			ttl := w.unauthorizedTTL
			if status.Allowed {
				ttl = w.authorizedTTL
			}
			if ttl > 0 {
				w.cache.Add(string(key), status, ttl)
			}
		}
	}
	switch {
	case status.Denied && status.Allowed:
		return authorizer.DecisionDeny, status.Reason, errors.New("webhook subject access review returned both allow and deny response")
	case status.Denied:
		return authorizer.DecisionDeny, status.Reason, nil
	case status.Allowed:
		return authorizer.DecisionAllow, status.Reason, nil
	default:
		return authorizer.DecisionNoOpinion, status.Reason, nil
	}
}

func (w *Webhook) cached(key string) (authorizationv1.SubjectAccessReviewStatus, bool) {
	v, ok := w.cache.Get(key)
	if !ok {
		return authorizationv1.SubjectAccessReviewStatus{}, false
	}
	return v.(authorizationv1.SubjectAccessReviewStatus), true
}

// ask POSTs the review, again after a transient failure (kube's retry
// rules and backoff), and returns the webhook's status.
func (w *Webhook) ask(ctx context.Context, review *authorizationv1.SubjectAccessReview) (authorizationv1.SubjectAccessReviewStatus, error) {
	var status authorizationv1.SubjectAccessReviewStatus
	err := webhookutil.WithExponentialBackoff(ctx, w.backoff, func() error {
		var err error
		status, err = w.client.create(ctx, review)
		return err
	}, webhookutil.DefaultShouldRetry)
	return status, err
}

// cacheable is false for reviews whose requester-controlled attributes are
// too large to keep.
func cacheable(a authorizer.Attributes) bool {
	n := len(a.GetNamespace()) + len(a.GetVerb()) + len(a.GetAPIGroup()) + len(a.GetAPIVersion()) +
		len(a.GetResource()) + len(a.GetSubresource()) + len(a.GetName()) + len(a.GetPath())
	return n < maxCachedAttributesSize
}

// ConditionsAwareAuthorize implements authorizer.Authorizer: the webhook
// answers without conditions.
func (w *Webhook) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(w.Authorize(ctx, a))
}

// EvaluateConditions implements authorizer.Authorizer: there are none.
func (*Webhook) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver: a webhook cannot list what
// a user may do, so the answer is incomplete, as kube's.
func (*Webhook) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return nil, nil, true, fmt.Errorf("webhook authorizer does not support user rule resolution")
}
