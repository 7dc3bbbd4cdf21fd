package imagepolicy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// annotations records a request's audit annotations (a key keeps its
// first value, as the audit context does).
type annotations map[string]string

func (a annotations) AddAuditAnnotation(k, v string) {
	if _, ok := a[k]; !ok {
		a[k] = v
	}
}

func auditedContext() (context.Context, annotations) {
	a := annotations{}
	return request.WithAuditAnnotator(context.Background(), a), a
}

func allow(int, []byte) (int, string) { return 200, `{"status":{"allowed":true}}` }

func newPlugin(t *testing.T, b *backend, cfg Config) (*Plugin, *clocktesting.FakeClock) {
	t.Helper()
	if cfg.KubeConfigFile == "" {
		cfg.KubeConfigFile = b.kubeconfig(t, "/imagepolicy")
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = time.Millisecond
	}
	c := clocktesting.NewFakeClock(time.Now())
	p, err := newWithClock(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

func podCreate(ns string) handlers.Attributes {
	return handlers.Attributes{Operation: handlers.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Namespace: ns, Kind: corev1.SchemeGroupVersion.WithKind("Pod")}
}

func pod(images ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	for _, i := range images {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: i, Image: i})
	}
	return p
}

// TestReviewOnTheWire: the backend gets kube's ImageReview (apiVersion
// and kind set; containers then init containers; only the image policy
// annotations; the namespace) by POST to the kubeconfig's server URL,
// over TLS with the kubeconfig's client certificate.
func TestReviewOnTheWire(t *testing.T) {
	b := startBackend(t, allow)
	p, _ := newPlugin(t, b, Config{AllowTTL: time.Minute})
	obj := pod("a", "b")
	obj.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "c"}}
	obj.Annotations = map[string]string{"x.image-policy.k8s.io/ticket": "1", "other": "2"}
	if err := p.Validate(context.Background(), podCreate("ns"), obj); err != nil {
		t.Fatal(err)
	}
	if b.calls() != 1 || b.users[0] != clientName {
		t.Fatalf("calls = %d, users = %v: want one call with the client certificate", b.calls(), b.users)
	}
	var got map[string]any
	if err := json.Unmarshal(b.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"imagepolicy.k8s.io/v1alpha1","kind":"ImageReview","metadata":{},` +
		`"spec":{"annotations":{"x.image-policy.k8s.io/ticket":"1"},"containers":[{"image":"a"},{"image":"b"},{"image":"c"}],"namespace":"ns"},` +
		`"status":{"allowed":false}}`
	if g, _ := json.Marshal(got); string(g) != want {
		t.Fatalf("review:\n got %s\nwant %s", g, want)
	}
}

// TestDecisions: the backend's answer, and kube's refusals (403
// Forbidden naming the pod, or its generateName before it has a name)
// and audit annotations.
func TestDecisions(t *testing.T) {
	tests := []struct {
		name        string
		answer      string
		generate    bool
		wantErr     string
		wantAudit   map[string]string
		wantNoAudit string
	}{
		{name: "allowed", answer: `{"status":{"allowed":true}}`, wantAudit: map[string]string{}},
		{name: "denied with a reason", answer: `{"status":{"allowed":false,"reason":"unsigned image a"}}`,
			wantErr: `pods "p" is forbidden: image policy webhook backend denied one or more images: unsigned image a`},
		{name: "denied without a reason", answer: `{"status":{"allowed":false}}`,
			wantErr: `pods "p" is forbidden: one or more images rejected by webhook backend`},
		{name: "denied, named by generateName", answer: `{"status":{"allowed":false}}`, generate: true,
			wantErr: `pods "gen-" is forbidden: one or more images rejected by webhook backend`},
		{name: "audit annotations under kube's prefix, even when denied",
			answer:    `{"status":{"allowed":false,"auditAnnotations":{"break-glass":"true","bad/key":"x"}}}`,
			wantErr:   `pods "p" is forbidden: one or more images rejected by webhook backend`,
			wantAudit: map[string]string{"imagepolicywebhook.image-policy.k8s.io/break-glass": "true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := startBackend(t, func(int, []byte) (int, string) { return 200, tc.answer })
			p, _ := newPlugin(t, b, Config{})
			ctx, audit := auditedContext()
			obj := pod("a")
			if tc.generate {
				obj.Name, obj.GenerateName = "", "gen-"
			}
			err := p.Validate(ctx, podCreate("ns"), obj)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
				t.Fatalf("err = %v, want Forbidden %q", err, tc.wantErr)
			}
			if tc.wantAudit != nil && !equal(audit, tc.wantAudit) {
				t.Fatalf("audit annotations = %v, want %v", audit, tc.wantAudit)
			}
		})
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCacheTTL: an answer is reused for the same review until its TTL
// (allowTTL or denyTTL) passes; another review asks again.
func TestCacheTTL(t *testing.T) {
	b := startBackend(t, func(_ int, body []byte) (int, string) {
		if strings.Contains(string(body), `"image":"bad"`) {
			return 200, `{"status":{"allowed":false,"reason":"bad"}}`
		}
		return 200, `{"status":{"allowed":true}}`
	})
	p, clock := newPlugin(t, b, Config{AllowTTL: 10 * time.Second, DenyTTL: 2 * time.Second})
	ask := func(image string, wantCalls int) {
		t.Helper()
		err := p.Validate(context.Background(), podCreate("ns"), pod(image))
		if (image == "bad") != (err != nil) {
			t.Fatalf("%s: err = %v", image, err)
		}
		if b.calls() != wantCalls {
			t.Fatalf("%s: backend calls = %d, want %d", image, b.calls(), wantCalls)
		}
	}
	ask("good", 1)
	ask("good", 1) // cached
	ask("bad", 2)
	ask("bad", 2) // cached
	clock.Step(3 * time.Second)
	ask("bad", 3)  // the denial expired
	ask("good", 3) // the approval did not
	clock.Step(8 * time.Second)
	ask("good", 4)
	if err := p.Validate(context.Background(), podCreate("other"), pod("good")); err != nil || b.calls() != 5 {
		t.Fatalf("another namespace is another review: err = %v, calls = %d", err, b.calls())
	}
}

// TestRetries: kube's retries (5 tries, on a server error), then the
// last error refuses the pod; an error that is not retried is not.
func TestRetries(t *testing.T) {
	flaky := startBackend(t, func(n int, _ []byte) (int, string) {
		if n < 3 {
			return 500, "overloaded"
		}
		return 200, `{"status":{"allowed":true}}`
	})
	p, _ := newPlugin(t, flaky, Config{})
	if err := p.Validate(context.Background(), podCreate("ns"), pod("a")); err != nil || flaky.calls() != 3 {
		t.Fatalf("err = %v, calls = %d: want allowed on the third try", err, flaky.calls())
	}
	down := startBackend(t, func(int, []byte) (int, string) { return 500, "overloaded" })
	p, _ = newPlugin(t, down, Config{})
	err := p.Validate(context.Background(), podCreate("ns"), pod("a"))
	want := `pods "p" is forbidden: an error on the server ("overloaded") has prevented the request from succeeding`
	if !apierrors.IsForbidden(err) || err.Error() != want || down.calls() != 5 {
		t.Fatalf("err = %v, calls = %d: want %q after 5 tries", err, down.calls(), want)
	}
	refused := startBackend(t, func(int, []byte) (int, string) { return 403, "no" })
	p, _ = newPlugin(t, refused, Config{})
	err = p.Validate(context.Background(), podCreate("ns"), pod("a"))
	if !apierrors.IsForbidden(err) || refused.calls() != 1 {
		t.Fatalf("err = %v, calls = %d: want Forbidden after one try", err, refused.calls())
	}
}

// TestDefaultAllow: with defaultAllow a backend failure lets the pod in,
// marked failed-open in the audit event and in its annotations.
func TestDefaultAllow(t *testing.T) {
	b := startBackend(t, func(int, []byte) (int, string) { return 403, "no" })
	p, _ := newPlugin(t, b, Config{DefaultAllow: true})
	ctx, audit := auditedContext()
	obj := pod("a")
	if err := p.Validate(ctx, podCreate("ns"), obj); err != nil {
		t.Fatal(err)
	}
	if audit[FailedOpenKey] != "true" || obj.Annotations["alpha.image-policy.k8s.io/failed-open"] != "true" {
		t.Fatalf("audit = %v, pod annotations = %v: want failed-open", audit, obj.Annotations)
	}
	// A failure is not cached: the next pod asks again.
	if err := p.Validate(ctx, podCreate("ns"), pod("a")); err != nil || b.calls() != 2 {
		t.Fatalf("err = %v, calls = %d", err, b.calls())
	}
}

// TestWhatIsReviewed: pod creates and updates, and the images of
// ephemeral containers for that subresource; nothing else.
func TestWhatIsReviewed(t *testing.T) {
	b := startBackend(t, allow)
	p, _ := newPlugin(t, b, Config{AllowTTL: -1})
	withEphemeral := pod("a")
	withEphemeral.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
	tests := []struct {
		name       string
		op         handlers.Operation
		resource   string
		sub        string
		obj        runtime.Object
		wantImages string // "" when the backend is not called
	}{
		{name: "update", op: handlers.Update, resource: "pods", obj: withEphemeral, wantImages: `[{"image":"a"}]`},
		{name: "ephemeral containers", op: handlers.Update, resource: "pods", sub: "ephemeralcontainers", obj: withEphemeral, wantImages: `[{"image":"busybox"}]`},
		{name: "status", op: handlers.Update, resource: "pods", sub: "status", obj: withEphemeral},
		{name: "delete", op: handlers.Delete, resource: "pods", obj: withEphemeral},
		{name: "another resource", op: handlers.Create, resource: "configmaps", obj: &corev1.ConfigMap{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := b.calls()
			a := podCreate("ns")
			a.Operation, a.Resource.Resource, a.Subresource = tc.op, tc.resource, tc.sub
			if err := p.Validate(context.Background(), a, tc.obj); err != nil {
				t.Fatal(err)
			}
			if tc.wantImages == "" {
				if b.calls() != before {
					t.Fatal("the backend was called")
				}
				return
			}
			if b.calls() != before+1 || !strings.Contains(string(b.bodies[before]), `"containers":`+tc.wantImages) {
				t.Fatalf("calls %d→%d, review %s: want containers %s", before, b.calls(), b.bodies[len(b.bodies)-1], tc.wantImages)
			}
		})
	}
	err := p.Validate(context.Background(), podCreate("ns"), &corev1.ConfigMap{})
	if !apierrors.IsBadRequest(err) || err.Error() != "Resource was marked with kind Pod but was unable to be converted" {
		t.Fatalf("err = %v, want kube's BadRequest", err)
	}
}

// TestBadKubeconfig: a kubeconfig that cannot be read fails New (and so
// the start).
func TestBadKubeconfig(t *testing.T) {
	if _, err := New(Config{KubeConfigFile: "/nonexistent/kubeconfig"}); err == nil {
		t.Fatal("want an error")
	}
}
