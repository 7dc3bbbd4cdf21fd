package admission

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestMatchPolicy: a webhook that names only autoscaling/v2 sees a
// request at autoscaling/v1 under matchPolicy Equivalent (the default),
// the object converted to v2, and its patch reaches the v1 object; under
// Exact it is not called.
func TestMatchPolicy(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	hpas := []string{"horizontalpodautoscalers"}
	equivalent := mutating("equivalent.admission.test", w, "/mutate", ns, rule("autoscaling", "v2", hpas, admissionregistrationv1.Create))
	exact := mutating("exact.admission.test", w, "/warn", ns, rule("autoscaling", "v2", hpas, admissionregistrationv1.Create))
	exact.MatchPolicy = ptr.To(admissionregistrationv1.Exact)
	registerMutating(t, equivalent, exact)
	client := clientset(t).AutoscalingV1().HorizontalPodAutoscalers(ns)
	var hpa *autoscalingv1.HorizontalPodAutoscaler
	eventually(t, func(i int) error {
		var err error
		hpa, err = client.Create(ctx(t), &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("h%d", i), Labels: map[string]string{"app": "x"}},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To[int32](50),
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if hpa.Labels["mutated"] == "" {
			return fmt.Errorf("not mutated yet")
		}
		return nil
	})
	if hpa.Spec.TargetCPUUtilizationPercentage == nil || *hpa.Spec.TargetCPUUtilizationPercentage != 50 {
		t.Errorf("the v1 object after a patch at v2: %+v", hpa.Spec)
	}
	reviews := w.calls("/mutate")
	req := reviews[len(reviews)-1].Request
	if req.Kind != (metav1.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}) ||
		req.Resource.Version != "v2" || req.RequestKind.Version != "v1" || req.RequestResource.Version != "v1" ||
		!strings.Contains(string(req.Object.Raw), `"apiVersion":"autoscaling/v2"`) || !strings.Contains(string(req.Object.Raw), `"averageUtilization":50`) {
		t.Errorf("the review at v2: %+v\n%s", req, req.Object.Raw)
	}
	if n := len(w.calls("/warn")); n != 0 {
		t.Errorf("the Exact webhook was called %d times", n)
	}
}

// TestEventsEquivalent: core and events.k8s.io events are one stored
// resource, so (matchPolicy Equivalent) a webhook naming either group is
// called on a write through the other, with the object converted to the
// kind it names, and its patch reaches the stored event.
func TestEventsEquivalent(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	events := []string{"events"}

	t.Run("core write, events.k8s.io webhook", func(t *testing.T) {
		ns := namespace(t)
		registerMutating(t, mutating("events.admission.test", w, "/annotate", ns, rule("events.k8s.io", "v1", events, admissionregistrationv1.Create)))
		eventually(t, func(i int) error {
			ev, err := clientset(t).CoreV1().Events(ns).Create(ctx(t), &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i)},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns},
				Reason:         "Tested", Message: "a core event", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if ev.Annotations["annotated"] != "yes" {
				return fmt.Errorf("not annotated yet: %v", ev.Annotations)
			}
			return nil
		})
		reviews := w.calls("/annotate")
		req := reviews[len(reviews)-1].Request
		if req.Kind != (metav1.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}) ||
			req.RequestKind.Group != "" || req.RequestResource.Group != "" ||
			!strings.Contains(string(req.Object.Raw), `"apiVersion":"events.k8s.io/v1"`) || !strings.Contains(string(req.Object.Raw), `"note":"a core event"`) {
			t.Errorf("the review at events.k8s.io/v1: kind %v, request kind %v\n%s", req.Kind, req.RequestKind, req.Object.Raw)
		}
	})

	t.Run("events.k8s.io write, core webhook", func(t *testing.T) {
		ns := namespace(t)
		registerMutating(t, mutating("core.events.admission.test", w, "/deny", ns, rule("", "v1", events, admissionregistrationv1.Create)))
		eventually(t, func(i int) error {
			_, err := clientset(t).EventsV1().Events(ns).Create(ctx(t), &eventsv1.Event{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i)}, EventTime: metav1.NowMicro(),
				ReportingController: "example.com/test", ReportingInstance: "test-1", Action: "Test", Reason: "Tested",
				Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}, Type: corev1.EventTypeNormal,
			}, metav1.CreateOptions{})
			if err == nil {
				return fmt.Errorf("created: the core webhook was not called yet")
			}
			if !strings.Contains(err.Error(), `admission webhook "core.events.admission.test" denied the request`) {
				t.Fatalf("the refusal: %v", err)
			}
			return nil
		})
	})
}
