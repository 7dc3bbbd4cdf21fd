package admission

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestMutatingSubresources checks that mutating webhooks see, and change,
// the objects of subresources whose kind is not their resource's, as in
// kube: the Scale of deployments/scale (the Deployment gets the patched
// replicas), the Binding of pods/binding (its annotations reach the Pod),
// and the Eviction of pods/eviction (a refusal stops it).
func TestMutatingSubresources(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	registerMutating(t,
		mutating("scale.admission.test", w, "/scale3", ns, rule("apps", "v1", []string{"deployments/scale"}, admissionregistrationv1.Update)),
		mutating("binding.admission.test", w, "/annotate", ns, rule("", "v1", []string{"pods/binding"}, admissionregistrationv1.Create)),
		mutating("eviction.admission.test", w, "/deny", ns, rule("", "v1", []string{"pods/eviction"}, admissionregistrationv1.Create)))
	c := clientset(t)

	labels := map[string]string{"app": "scaled"}
	_, err := c.AppsV1().Deployments(ns).Create(ctx(t), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, func(int) error {
		scale, err := c.AppsV1().Deployments(ns).UpdateScale(ctx(t), "d", &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}}, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if scale.Spec.Replicas != 3 {
			return fmt.Errorf("the scale written: %d replicas, want the webhook's 3", scale.Spec.Replicas)
		}
		return nil
	})
	d, err := c.AppsV1().Deployments(ns).Get(ctx(t), "d", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 3 {
		t.Errorf("the deployment after the scale: %v, %v", d.Spec.Replicas, err)
	}
	reviews := w.calls("/scale3")
	if r := reviews[len(reviews)-1].Request; r.Kind.Kind != "Scale" || r.Kind.Group != "autoscaling" || r.SubResource != "scale" ||
		r.Resource.Resource != "deployments" || len(r.OldObject.Raw) == 0 || !strings.Contains(string(r.Object.Raw), `"replicas":5`) {
		t.Errorf("the scale's review: kind %v, resource %v/%s, old %s, object %s", r.Kind, r.Resource, r.SubResource, r.OldObject.Raw, r.Object.Raw)
	}

	if _, err := c.CoreV1().Pods(ns).Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = c.CoreV1().Pods(ns).Bind(ctx(t), &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.CoreV1().Pods(ns).Get(ctx(t), "p", metav1.GetOptions{})
	if err != nil || p.Spec.NodeName != "node-1" || p.Annotations["annotated"] != "yes" {
		t.Errorf("the bound pod: node %q, annotations %v, %v", p.Spec.NodeName, p.Annotations, err)
	}
	if r := w.calls("/annotate"); len(r) == 0 || r[len(r)-1].Request.Kind.Kind != "Binding" || r[len(r)-1].Request.SubResource != "binding" {
		t.Errorf("the binding's reviews: %d", len(r))
	}

	err = c.CoreV1().Pods(ns).EvictV1(ctx(t), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}})
	if status := statusOf(t, err); status.Code != 403 || !strings.Contains(status.Message, `admission webhook "eviction.admission.test" denied the request: widgets are not welcome here`) {
		t.Errorf("the eviction: %d %q", status.Code, status.Message)
	}
	if _, err := c.CoreV1().Pods(ns).Get(ctx(t), "p", metav1.GetOptions{}); err != nil {
		t.Errorf("the pod after a refused eviction: %v", err)
	}
}
