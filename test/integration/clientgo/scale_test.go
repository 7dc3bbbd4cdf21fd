package clientgo

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
)

// TestScaleClient scales every scalable kind with client-go's scale
// client, which finds the subresources and their Scale kinds in
// discovery (as kubectl scale and the HPA do).
func TestScaleClient(t *testing.T) {
	ns := namespace(t)
	cs := clientset(t)
	disc := memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(config()))
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(disc)
	scales, err := scale.NewForConfig(config(), mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(disc))
	if err != nil {
		t.Fatal(err)
	}
	replicas := int32(1)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "s"}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx(t), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: selector, Template: template("s")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx(t), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: selector, Template: template("s")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx(t), &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: selector, Template: template("s")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tpl := template("s")
	if _, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx(t), &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ReplicationControllerSpec{Replicas: &replicas, Selector: map[string]string{"app": "s"}, Template: &tpl}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, gr := range []schema.GroupResource{{Group: "apps", Resource: "deployments"}, {Group: "apps", Resource: "statefulsets"}, {Group: "apps", Resource: "replicasets"}, {Resource: "replicationcontrollers"}} {
		t.Run(gr.String(), func(t *testing.T) {
			gvr, err := mapper.ResourceFor(gr.WithVersion(""))
			if err != nil {
				t.Fatal(err)
			}
			s, err := scales.Scales(ns).Get(ctx(t), gr, "s", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Spec.Replicas != 1 || s.Status.Selector != "app=s" || s.Name != "s" || s.UID == "" {
				t.Errorf("scale %+v", s)
			}
			s.Spec.Replicas = 3
			updated, err := scales.Scales(ns).Update(ctx(t), gr, s, metav1.UpdateOptions{})
			if err != nil || updated.Spec.Replicas != 3 {
				t.Fatalf("update: %v %+v", err, updated)
			}
			// The Scale read before the update is stale now.
			if _, err := scales.Scales(ns).Update(ctx(t), gr, s, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("stale update: %v", err)
			}
			patched, err := scales.Scales(ns).Patch(ctx(t), gvr, "s", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{})
			if err != nil || patched.Spec.Replicas != 5 {
				t.Fatalf("patch: %v %+v", err, patched)
			}
			var got *autoscalingv1.Scale
			if got, err = scales.Scales(ns).Get(ctx(t), gr, "s", metav1.GetOptions{}); err != nil || got.Spec.Replicas != 5 {
				t.Errorf("after patch: %v %+v", err, got)
			}
		})
	}
	t.Run("not scalable", func(t *testing.T) {
		if _, err := scales.Scales(ns).Get(ctx(t), schema.GroupResource{Group: "apps", Resource: "daemonsets"}, "s", metav1.GetOptions{}); err == nil {
			t.Error("daemonsets have a scale")
		}
	})
}
