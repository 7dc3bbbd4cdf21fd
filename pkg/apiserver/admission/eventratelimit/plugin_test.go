package eventratelimit

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

func newPlugin(t *testing.T, limits ...Limit) (*Plugin, *clocktesting.FakeClock) {
	t.Helper()
	c := clocktesting.NewFakeClock(time.Now())
	p, err := newWithClock(&Configuration{Limits: limits}, c)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

func eventCreate(ns string) handlers.Attributes {
	return handlers.Attributes{Operation: handlers.Create, Resource: corev1.SchemeGroupVersion.WithResource("events"),
		Namespace: ns, Kind: corev1.SchemeGroupVersion.WithKind("Event")}
}

// accept asks p for an event and checks the decision: want "" to be
// admitted, else kube's 429 message.
func accept(t *testing.T, p *Plugin, ctx context.Context, a handlers.Attributes, obj runtime.Object, want string) {
	t.Helper()
	err := p.Validate(ctx, a, obj)
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case want != "" && (!apierrors.IsTooManyRequests(err) || err.Error() != want):
		t.Fatalf("err = %v, want 429 %q", err, want)
	}
}

// TestServerLimit: one bucket of burst tokens, refilled at qps.
func TestServerLimit(t *testing.T) {
	p, clock := newPlugin(t, Limit{Type: ServerLimitType, QPS: 1, Burst: 3})
	ctx := context.Background()
	for ns := range 3 {
		accept(t, p, ctx, eventCreate(string(rune('a'+ns))), &corev1.Event{}, "")
	}
	full := "Too many requests: limit reached on type Server for key "
	accept(t, p, ctx, eventCreate("d"), &corev1.Event{}, full)
	clock.Step(time.Second)
	accept(t, p, ctx, eventCreate("d"), &corev1.Event{}, "")
	accept(t, p, ctx, eventCreate("d"), &corev1.Event{}, full)
}

// eventRequest is the create of an event by user in namespace, from a
// component about a pod.
type eventRequest struct {
	user, namespace, component, pod string
}

// accept asks p for the event and checks the decision as accept does.
func (e eventRequest) accept(t *testing.T, p *Plugin, want string) {
	t.Helper()
	ctx := request.WithUser(context.Background(), &user.DefaultInfo{Name: e.user})
	event := &corev1.Event{Source: corev1.EventSource{Component: e.component, Host: "node1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: e.pod, UID: "u1", APIVersion: "v1"}}
	accept(t, p, ctx, eventCreate(e.namespace), event, want)
}

// TestKeyedLimits: a bucket per namespace, user, or source and object.
func TestKeyedLimits(t *testing.T) {
	first := eventRequest{user: "alice", namespace: "a", component: "x", pod: "p"}
	tests := []struct {
		name        string
		limit       LimitType
		same, other eventRequest // of first's bucket, and of another
		wantMessage string
	}{
		{name: "namespace", limit: NamespaceLimitType,
			same:        eventRequest{user: "bob", namespace: "a", component: "y", pod: "q"},
			other:       eventRequest{user: "alice", namespace: "b", component: "x", pod: "p"},
			wantMessage: "Too many requests: limit reached on type Namespace for key a"},
		{name: "user", limit: UserLimitType,
			same:        eventRequest{user: "alice", namespace: "b", component: "y", pod: "q"},
			other:       eventRequest{user: "bob", namespace: "a", component: "x", pod: "p"},
			wantMessage: "Too many requests: limit reached on type User for key alice"},
		{name: "source and object", limit: SourceAndObjectLimitType,
			same:        eventRequest{user: "bob", namespace: "b", component: "x", pod: "p"},
			other:       eventRequest{user: "alice", namespace: "a", component: "x", pod: "q"},
			wantMessage: "Too many requests: limit reached on type SourceAndObject for key xnode1Podnspu1v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlugin(t, Limit{Type: tc.limit, QPS: 1, Burst: 1})
			first.accept(t, p, "")
			tc.same.accept(t, p, tc.wantMessage)
			tc.other.accept(t, p, "")
		})
	}
}

// TestLRU: a forgotten bucket starts full again.
func TestLRU(t *testing.T) {
	p, _ := newPlugin(t, Limit{Type: NamespaceLimitType, QPS: 1, Burst: 1, CacheSize: 1})
	ctx := context.Background()
	accept(t, p, ctx, eventCreate("a"), &corev1.Event{}, "")
	accept(t, p, ctx, eventCreate("a"), &corev1.Event{}, "Too many requests: limit reached on type Namespace for key a")
	accept(t, p, ctx, eventCreate("b"), &corev1.Event{}, "") // forgets a
	accept(t, p, ctx, eventCreate("a"), &corev1.Event{}, "")
}

// TestAllLimitsAsked: every limit takes a token; the refusals of several
// are listed together.
func TestAllLimitsAsked(t *testing.T) {
	p, _ := newPlugin(t, Limit{Type: ServerLimitType, QPS: 1, Burst: 1}, Limit{Type: NamespaceLimitType, QPS: 1, Burst: 1})
	ctx := context.Background()
	accept(t, p, ctx, eventCreate("a"), &corev1.Event{}, "")
	accept(t, p, ctx, eventCreate("a"), &corev1.Event{},
		"Too many requests: [limit reached on type Server for key , limit reached on type Namespace for key a]")
}

// TestNotLimited: dry runs, deletes, other kinds, and events.k8s.io
// Events (kube compares the kind with the core group's Event) take no
// token.
func TestNotLimited(t *testing.T) {
	p, _ := newPlugin(t, Limit{Type: ServerLimitType, QPS: 1, Burst: 1})
	ctx := context.Background()
	dryRun := eventCreate("a")
	dryRun.DryRun = true
	del := eventCreate("a")
	del.Operation = handlers.Delete
	configMap := eventCreate("a")
	configMap.Resource.Resource, configMap.Kind.Kind = "configmaps", "ConfigMap"
	newEvent := handlers.Attributes{Operation: handlers.Create, Resource: eventsv1.SchemeGroupVersion.WithResource("events"),
		Namespace: "a", Kind: eventsv1.SchemeGroupVersion.WithKind("Event")}
	for range 3 {
		for _, a := range []handlers.Attributes{dryRun, del, configMap, newEvent} {
			accept(t, p, ctx, a, &corev1.Event{}, "")
		}
	}
	update := eventCreate("a")
	update.Operation = handlers.Update
	accept(t, p, ctx, update, &corev1.Event{}, "")
	accept(t, p, ctx, eventCreate("a"), &corev1.Event{}, "Too many requests: limit reached on type Server for key ")
}
