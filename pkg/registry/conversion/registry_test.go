package conversion

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRegistryConvert(t *testing.T) {
	t.Parallel()
	r := Builtin()
	v1Kind := autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	v2Kind := autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")

	same := &autoscalingv2.HorizontalPodAutoscaler{}
	if got, err := r.Convert(same, v2Kind); err != nil || got != same {
		t.Errorf("converting to its own kind: got %p, %v; want the object itself", got, err)
	}
	in := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 2}}
	got, err := r.Convert(in, v2Kind)
	if err != nil {
		t.Fatal(err)
	}
	if hpa, ok := got.(*autoscalingv2.HorizontalPodAutoscaler); !ok || hpa.Name != "a" || hpa.Spec.MaxReplicas != 2 {
		t.Errorf("got %#v", got)
	}
	if gvk := got.GetObjectKind().GroupVersionKind(); gvk != v2Kind {
		t.Errorf("TypeMeta: got %v, want %v", gvk, v2Kind)
	}
	if back, err := r.Convert(got, v1Kind); err != nil || back.(*autoscalingv1.HorizontalPodAutoscaler).Spec.MaxReplicas != 2 {
		t.Errorf("back to v1: %v, %v", back, err)
	}

	for _, tc := range []struct {
		name string
		in   runtime.Object
		to   schema.GroupVersionKind
	}{
		{"unknown kind", &corev1.ConfigMap{}, v1Kind},
		{"other family", &corev1.Event{}, v1Kind},
		{"unknown target", &autoscalingv1.HorizontalPodAutoscaler{}, autoscalingv1.SchemeGroupVersion.WithKind("Scale")},
	} {
		if _, err := r.Convert(tc.in, tc.to); err == nil {
			t.Errorf("%s: converting %T to %v succeeded", tc.name, tc.in, tc.to)
		}
	}
}

func TestRegistryRefusesBadRegistrations(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	hub := autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	newHub := func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} }
	newSpoke := func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} }
	spoke := autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	if err := r.AddSpoke(spoke, hub, newSpoke, hpaV1ToV2, hpaV2ToV1); err == nil {
		t.Error("a spoke of an unregistered hub was accepted")
	}
	if err := r.AddHub(hub, newHub); err != nil {
		t.Fatal(err)
	}
	if err := r.AddHub(hub, newHub); err == nil {
		t.Error("a kind registered twice was accepted")
	}
	if err := r.AddSpoke(spoke, hub, newSpoke, nil, hpaV2ToV1); err == nil {
		t.Error("a spoke without a conversion to its hub was accepted")
	}
}

// The field manager's convertor converts within a family and a group
// (not core v1 Events to events.k8s.io/v1, as kube's scheme does not), and
// leaves other kinds to the fallback.
func TestObjectConvertor(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	fallback := runtime.UnsafeObjectConvertor(scheme)
	c := Builtin().ObjectConvertor(fallback)

	got, err := c.ConvertToVersion(&autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 4}}, autoscalingv1.SchemeGroupVersion)
	if h, ok := got.(*autoscalingv1.HorizontalPodAutoscaler); err != nil || !ok || h.Spec.MaxReplicas != 4 {
		t.Errorf("v2 at autoscaling/v1: got %#v, %v", got, err)
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Message: "hello"}
	for _, gv := range []schema.GroupVersion{eventsv1.SchemeGroupVersion, autoscalingv1.SchemeGroupVersion} {
		if _, err := c.ConvertToVersion(ev, gv); !runtime.IsNotRegisteredError(err) {
			t.Errorf("a core event at %v: got %v, want a not-registered error", gv, err)
		}
	}

	out := &autoscalingv1.HorizontalPodAutoscaler{}
	if err := c.Convert(&autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 4}}, out, nil); err != nil || out.Spec.MaxReplicas != 4 {
		t.Errorf("Convert into a v1 object: %v, %#v", err, out)
	}

	cm := &corev1.ConfigMap{}
	if got, err := c.ConvertToVersion(cm, corev1.SchemeGroupVersion); err != nil || got != cm {
		t.Errorf("a kind without conversions goes to the fallback as is: got %v, %v", got, err)
	}
}

// The field manager converts unstructured objects (its typed values made
// objects again): they come out typed.
func TestObjectConvertorUnstructured(t *testing.T) {
	t.Parallel()
	c := Builtin().ObjectConvertor(runtime.UnsafeObjectConvertor(runtime.NewScheme()))
	in := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": "a"},
		"spec":     map[string]any{"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(50)},
	}}
	for _, target := range []schema.GroupVersion{autoscalingv1.SchemeGroupVersion, autoscalingv2.SchemeGroupVersion} {
		got, err := c.ConvertToVersion(in.DeepCopy(), target)
		if err != nil {
			t.Fatalf("to %v: %v", target, err)
		}
		switch o := got.(type) {
		case *autoscalingv1.HorizontalPodAutoscaler:
			if target != autoscalingv1.SchemeGroupVersion || *o.Spec.TargetCPUUtilizationPercentage != 50 {
				t.Errorf("to %v: %#v", target, o)
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			if target != autoscalingv2.SchemeGroupVersion || *o.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 {
				t.Errorf("to %v: %#v", target, o)
			}
		default:
			t.Errorf("to %v: got %T", target, got)
		}
	}
}

// Asked for a served version at its own version, the field manager's
// convertor gives the object as storing it makes it (kube's field manager
// sees its internal object so), but the empty object of a create.
func TestObjectConvertorStoredForm(t *testing.T) {
	t.Parallel()
	c := Builtin().ObjectConvertor(runtime.UnsafeObjectConvertor(runtime.NewScheme()))
	in := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}}
	got, err := c.ConvertToVersion(in, autoscalingv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if h := got.(*autoscalingv1.HorizontalPodAutoscaler); h.Spec.TargetCPUUtilizationPercentage == nil || *h.Spec.TargetCPUUtilizationPercentage != 80 {
		t.Errorf("stored form: %+v, want the 80 %% CPU target", h.Spec)
	}
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		t.Errorf("the input changed: %+v", in.Spec)
	}
	empty := &autoscalingv1.HorizontalPodAutoscaler{}
	if got, err := c.ConvertToVersion(empty, autoscalingv1.SchemeGroupVersion); err != nil || got != empty || empty.Spec.TargetCPUUtilizationPercentage != nil {
		t.Errorf("the empty object: got %#v, %v; want it as is", got, err)
	}
	hub := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	if got, err := c.ConvertToVersion(hub, autoscalingv2.SchemeGroupVersion); err != nil || got != hub {
		t.Errorf("a hub object at its own version: got %#v, %v; want it as is", got, err)
	}
}
