package eventratelimit

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// PluginName is kube's name of the plugin.
const PluginName = "EventRateLimit"

// defaultCacheSize is kube's number of buckets kept when a limit gives
// no cacheSize.
const defaultCacheSize = 4096

// eventKind is the kind the plugin limits: kube compares the request's
// kind with the core group's Event only, so events.k8s.io Events pass.
var eventKind = schema.GroupKind{Kind: "Event"}

// Plugin is kube's validating plugin EventRateLimit: each create or
// update of an Event takes a token from the bucket of every limit; one
// empty bucket refuses it with 429 TooManyRequests. A dry run takes
// none (it writes nothing).
type Plugin struct {
	limits []*limiter
}

// New makes the plugin for a validated configuration (LoadConfiguration).
func New(cfg *Configuration) (*Plugin, error) {
	return newWithClock(cfg, clock.RealClock{})
}

func newWithClock(cfg *Configuration, c clock.Clock) (*Plugin, error) {
	p := &Plugin{}
	for _, l := range cfg.Limits {
		lim, err := newLimiter(l, c)
		if err != nil {
			return nil, err
		}
		p.limits = append(p.limits, lim)
	}
	return p, nil
}

// Validate implements handlers.Admission.
func (p *Plugin) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Create && a.Operation != handlers.Update {
		return nil
	}
	if a.Kind.GroupKind() != eventKind || a.DryRun {
		return nil
	}
	var errs []error
	for _, l := range p.limits {
		if err := l.accept(ctx, a, obj); err != nil {
			errs = append(errs, err)
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return apierrors.NewTooManyRequestsError(err.Error())
	}
	return nil
}

// limiter is one limit: its buckets by key.
type limiter struct {
	limitType LimitType
	key       func(ctx context.Context, a handlers.Attributes, obj runtime.Object) string
	// server is the Server limit's one bucket; the others are kept in
	// buckets, least recently used forgotten first.
	server  flowcontrol.RateLimiter
	buckets *lru.Cache
	newFunc func() flowcontrol.RateLimiter
}

func newLimiter(l Limit, c clock.Clock) (*limiter, error) {
	newBucket := func() flowcontrol.RateLimiter {
		return flowcontrol.NewTokenBucketRateLimiterWithClock(float32(l.QPS), int(l.Burst), c)
	}
	lim := &limiter{limitType: l.Type, newFunc: newBucket}
	switch l.Type {
	case ServerLimitType:
		lim.server = newBucket()
		lim.key = func(context.Context, handlers.Attributes, runtime.Object) string { return "" }
		return lim, nil
	case NamespaceLimitType:
		lim.key = func(_ context.Context, a handlers.Attributes, _ runtime.Object) string { return a.Namespace }
	case UserLimitType:
		lim.key = userKey
	case SourceAndObjectLimitType:
		lim.key = sourceAndObjectKey
	default:
		return nil, fmt.Errorf("unknown event rate limit type: %v", l.Type)
	}
	size := int(l.CacheSize)
	if size == 0 {
		size = defaultCacheSize
	}
	lim.buckets = lru.New(size)
	return lim, nil
}

// accept takes a token from the request's bucket, or says which is
// empty, in kube's words.
func (l *limiter) accept(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	key := l.key(ctx, a, obj)
	if !l.bucket(key).TryAccept() {
		return fmt.Errorf("limit reached on type %v for key %v", l.limitType, key)
	}
	return nil
}

// bucket is key's bucket, a full one when it has none (or it was
// forgotten).
func (l *limiter) bucket(key string) flowcontrol.RateLimiter {
	if l.server != nil {
		return l.server
	}
	if b, ok := l.buckets.Get(key); ok {
		return b.(flowcontrol.RateLimiter)
	}
	b := l.newFunc()
	l.buckets.Add(key, b)
	return b
}

// userKey is the requesting user's name ("" without one).
func userKey(ctx context.Context, _ handlers.Attributes, _ runtime.Object) string {
	if u, ok := request.UserFrom(ctx); ok {
		return u.GetName()
	}
	return ""
}

// sourceAndObjectKey is the event's source and involved object, their
// fields joined with no separator as kube joins them.
func sourceAndObjectKey(_ context.Context, _ handlers.Attributes, obj runtime.Object) string {
	event, ok := obj.(*corev1.Event)
	if !ok {
		return ""
	}
	return strings.Join([]string{
		event.Source.Component,
		event.Source.Host,
		event.InvolvedObject.Kind,
		event.InvolvedObject.Namespace,
		event.InvolvedObject.Name,
		string(event.InvolvedObject.UID),
		event.InvolvedObject.APIVersion,
	}, "")
}
