package admission

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// eventRateLimitConfig writes an admission configuration giving
// EventRateLimit limits (YAML lines under limits:) and returns its name.
func eventRateLimitConfig(t *testing.T, limits string) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "eventratelimit.yaml"),
		"apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n"+limits)
	writeFile(t, filepath.Join(dir, "admission.yaml"), `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: EventRateLimit
  path: eventratelimit.yaml
`)
	return filepath.Join(dir, "admission.yaml")
}

func coreEvent(ns string, i int) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i), Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p", APIVersion: "v1"},
		Reason:         "Test", Message: "test", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"}}
}

// TestEventRateLimit: with the plugin enabled, a namespace's events beyond
// its bucket's burst are refused with kube's 429 TooManyRequests; another
// namespace has its own bucket; dry runs, other resources and
// events.k8s.io Events are not limited (kube compares the kind with the
// core group's Event).
func TestEventRateLimit(t *testing.T) {
	if *reference {
		t.Skip("needs a server started with the test's admission configuration")
	}
	t.Parallel()
	const burst = 3
	file := eventRateLimitConfig(t, fmt.Sprintf("- type: Namespace\n  qps: 1\n  burst: %d\n", burst))
	ts := testserver.Start(t, func(o *app.Options) {
		o.Admission.EnablePlugins = []string{"EventRateLimit"}
		o.Admission.ConfigFile = file
	})
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	limited, other := ts.CreateNamespace(t), ts.CreateNamespace(t)

	// The bucket refills at 1 a second: create until refused (a slow
	// machine may be given a token or two more), never more than the
	// refills could allow.
	var err error
	created := 0
	for ; created < 50; created++ {
		if _, err = cs.CoreV1().Events(limited).Create(ctx(t), coreEvent(limited, created), metav1.CreateOptions{}); err != nil {
			break
		}
	}
	if created < burst {
		t.Fatalf("refused after %d events, want at least burst (%d): %v", created, burst, err)
	}
	status := statusOf(t, err)
	want := "Too many requests: limit reached on type Namespace for key " + limited
	if status.Code != 429 || status.Reason != metav1.StatusReasonTooManyRequests || status.Message != want {
		t.Fatalf("refusal %d %s %q, want 429 TooManyRequests %q", status.Code, status.Reason, status.Message, want)
	}

	if _, err := cs.CoreV1().Events(other).Create(ctx(t), coreEvent(other, 0), metav1.CreateOptions{}); err != nil {
		t.Errorf("another namespace's first event: %v", err)
	}
	for i := range 2 * burst {
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		if _, err := cs.CoreV1().Events(limited).Create(ctx(t), coreEvent(limited, 100+i), dry); err != nil {
			t.Fatalf("a dry run: %v", err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps(limited).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a config map: %v", err)
		}
		ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("new%d", i)}, EventTime: metav1.NowMicro(),
			ReportingController: "example.com/test", ReportingInstance: "test-1", Action: "Test", Reason: "Test", Type: "Normal",
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: limited, Name: "p", APIVersion: "v1"}}
		if _, err := cs.EventsV1().Events(limited).Create(ctx(t), ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("an events.k8s.io Event: %v", err)
		}
	}
}

// TestEventRateLimitConfiguration: enabled without limits, or with bad
// ones, the plugin fails the start with kube's validation errors.
func TestEventRateLimitConfiguration(t *testing.T) {
	if *reference {
		t.Skip("starts servers of its own")
	}
	t.Parallel()
	tests := []struct {
		name, file, want string
	}{
		{name: "no configuration", want: "EventRateLimit: limits: Invalid value: null: must not be empty"},
		{name: "a bad limit", file: eventRateLimitConfig(t, "- type: Namespace\n  qps: 0\n  burst: 1\n"),
			want: "EventRateLimit: limits[0].qps: Invalid value: 0: must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := testserver.New(t.TempDir(), func(o *app.Options) {
				o.Admission.EnablePlugins = []string{"EventRateLimit"}
				o.Admission.ConfigFile = tc.file
			})
			if err == nil {
				ts.Server.Stop()
				t.Fatal("the server started")
			}
			if !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
