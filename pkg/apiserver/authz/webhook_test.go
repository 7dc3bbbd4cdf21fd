package authz

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/wait"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"
)

// reviewServer answers every review with allowed = the user is "jane",
// and keeps the last review and the number of calls.
type reviewServer struct {
	*httptest.Server
	calls atomic.Int32
	last  atomic.Pointer[authorizationv1.SubjectAccessReview]
}

func startReviewServer(t *testing.T) *reviewServer {
	s := &reviewServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		var review authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.last.Store(&review)
		review.Status.Allowed = review.Spec.User == "jane"
		json.NewEncoder(w).Encode(&review)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *reviewServer) webhook(t *testing.T, cfg WebhookConfig) *Webhook {
	t.Helper()
	cfg.Client = &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}),
	}}
	cfg.Version = "v1"
	cfg.RetryBackoff = wait.Backoff{Steps: 1}
	w, err := NewWebhook(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWebhookReview: the review states the request's selectors as kube's
// (operators it cannot state are left out, which only broadens it).
func TestWebhookReview(t *testing.T) {
	s := startReviewServer(t)
	w := s.webhook(t, WebhookConfig{})
	inNames, _ := labels.NewRequirement("app", selection.In, []string{"a", "b"})
	exists, _ := labels.NewRequirement("tier", selection.Exists, nil)
	gt, _ := labels.NewRequirement("n", selection.GreaterThan, []string{"1"})
	d, _, err := w.Authorize(context.Background(), &authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: "jane", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}},
		Verb: "list", Resource: "pods", APIVersion: "v1", Namespace: "ns", ResourceRequest: true,
		FieldSelectorRequirements: fields.Requirements{{Operator: selection.Equals, Field: "spec.nodeName", Value: "n1"}},
		LabelSelectorRequirements: labels.Requirements{*inNames, *exists, *gt},
	})
	if d != authorizer.DecisionAllow || err != nil {
		t.Fatalf("decision %v, %v", d, err)
	}
	ra := s.last.Load().Spec.ResourceAttributes
	got, _ := json.Marshal(ra)
	want := `{"namespace":"ns","verb":"list","version":"v1","resource":"pods","fieldSelector":{"requirements":[{"key":"spec.nodeName","operator":"In","values":["n1"]}]},` +
		`"labelSelector":{"requirements":[{"key":"app","operator":"In","values":["a","b"]},{"key":"tier","operator":"Exists"}]}}`
	if string(got) != want {
		t.Errorf("resourceAttributes\n got %s\nwant %s", got, want)
	}
}

// TestWebhookCache: answers are reused for their TTL, not past it, not
// when the TTL is 0, and not for reviews too large to keep.
func TestWebhookCache(t *testing.T) {
	ctx := context.Background()
	get := func(name, path string) authorizer.Attributes {
		return &authorizer.AttributesRecord{User: &user.DefaultInfo{Name: name}, Verb: "get", Path: path}
	}
	t.Run("ttl", func(t *testing.T) {
		s := startReviewServer(t)
		w := s.webhook(t, WebhookConfig{AuthorizedTTL: 200 * time.Millisecond, UnauthorizedTTL: time.Minute})
		for range 3 {
			w.Authorize(ctx, get("jane", "/a"))
			w.Authorize(ctx, get("bob", "/a"))
		}
		if n := s.calls.Load(); n != 2 {
			t.Fatalf("%d calls, want 2", n)
		}
		time.Sleep(300 * time.Millisecond)
		w.Authorize(ctx, get("jane", "/a"))
		w.Authorize(ctx, get("bob", "/a"))
		if n := s.calls.Load(); n != 3 {
			t.Errorf("%d calls, want 3 (jane's answer expired, bob's not)", n)
		}
	})
	t.Run("no ttl, large", func(t *testing.T) {
		s := startReviewServer(t)
		w := s.webhook(t, WebhookConfig{AuthorizedTTL: time.Minute})
		long := "/" + strings.Repeat("x", maxCachedAttributesSize)
		for range 2 {
			w.Authorize(ctx, get("bob", "/a"))
			w.Authorize(ctx, get("jane", long))
		}
		if n := s.calls.Load(); n != 4 {
			t.Errorf("%d calls, want 4", n)
		}
	})
}

// TestWebhookMatchConditions: a false condition skips the webhook (no
// opinion); one that fails to evaluate is the failure policy's decision.
func TestWebhookMatchConditions(t *testing.T) {
	s := startReviewServer(t)
	w := s.webhook(t, WebhookConfig{
		DecisionOnError: authorizer.DecisionDeny,
		MatchConditions: []apiserverconfig.WebhookMatchCondition{{Expression: "request.resourceAttributes.namespace != 'kube-system'"}},
	})
	ctx := context.Background()
	jane := &user.DefaultInfo{Name: "jane"}
	for _, tc := range []struct {
		name    string
		attrs   authorizer.Attributes
		want    authorizer.Decision
		wantErr bool
	}{
		{"match", &authorizer.AttributesRecord{User: jane, Verb: "get", Resource: "pods", Namespace: "a", ResourceRequest: true}, authorizer.DecisionAllow, false},
		{"no match", &authorizer.AttributesRecord{User: jane, Verb: "get", Resource: "pods", Namespace: "kube-system", ResourceRequest: true}, authorizer.DecisionNoOpinion, false},
		{"error", &authorizer.AttributesRecord{User: jane, Verb: "get", Path: "/healthz"}, authorizer.DecisionDeny, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := w.Authorize(ctx, tc.attrs)
			if d != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("got %v, %v; want %v (error %t)", d, err, tc.want, tc.wantErr)
			}
		})
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}
