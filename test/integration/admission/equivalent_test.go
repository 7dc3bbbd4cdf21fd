package admission

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
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
