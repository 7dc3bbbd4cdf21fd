package versions

import (
	"errors"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/ptr"
)

// What kube-apiserver v1.37.2 shows at autoscaling/v1 of an autoscaler
// created at v2 with a memory target and a scale-down window (recorded).
const (
	wantMetricsAnnotation  = `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]`
	wantBehaviorAnnotation = `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},` +
		`{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max",` +
		`"Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}`
)

var deploymentRef = autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}

func hpaV1(name string) *autoscalingv1.HorizontalPodAutoscaler {
	return &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: deploymentRef, MaxReplicas: 3}}
}

func hpaV2(name string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(deploymentRef),
			MaxReplicas:    3,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}},
		},
	}
}

// An autoscaler created at v1 reads at v2 with the CPU target v1 implies,
// one created at v2 reads at v1 with what v1 cannot say in annotations,
// and an update at v1 keeps it.
func TestHPAConversions(t *testing.T) {
	t.Parallel()
	inEachEncoding(t, func(t *testing.T, cs kubernetes.Interface, ns string) {
		v1, v2 := cs.AutoscalingV1().HorizontalPodAutoscalers(ns), cs.AutoscalingV2().HorizontalPodAutoscalers(ns)

		if _, err := v1.Create(ctx(t), hpaV1("from-v1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		atV2, err := v2.Get(ctx(t), "from-v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m := atV2.Spec.Metrics; len(m) != 1 || m[0].Resource == nil || m[0].Resource.Name != corev1.ResourceCPU ||
			*m[0].Resource.Target.AverageUtilization != 80 || *atV2.Spec.MinReplicas != 1 || atV2.Generation != 1 {
			t.Errorf("created at v1, read at v2: %+v", atV2.Spec)
		}

		if _, err := v2.Create(ctx(t), hpaV2("from-v2"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		atV1, err := v1.Get(ctx(t), "from-v2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := atV1.Annotations["autoscaling.alpha.kubernetes.io/metrics"]; got != wantMetricsAnnotation {
			t.Errorf("metrics annotation:\n got %s\nwant %s", got, wantMetricsAnnotation)
		}
		if got := atV1.Annotations["autoscaling.alpha.kubernetes.io/behavior"]; got != wantBehaviorAnnotation {
			t.Errorf("behavior annotation:\n got %s\nwant %s", got, wantBehaviorAnnotation)
		}
		if atV1.Spec.TargetCPUUtilizationPercentage != nil {
			t.Errorf("no CPU target at v2, one at v1: %v", *atV1.Spec.TargetCPUUtilizationPercentage)
		}

		// A read-modify-write at v1 carries the annotations back.
		atV1.Spec.MaxReplicas = 5
		updated, err := v1.Update(ctx(t), atV1, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if updated.Generation != 2 || updated.Spec.MaxReplicas != 5 {
			t.Errorf("updated at v1: generation %d, %+v", updated.Generation, updated.Spec)
		}
		atV2, err = v2.Get(ctx(t), "from-v2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m := atV2.Spec.Metrics; len(m) != 1 || m[0].Resource.Name != corev1.ResourceMemory || atV2.Spec.MaxReplicas != 5 ||
			atV2.Spec.Behavior == nil || *atV2.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 60 || len(atV2.Annotations) != 0 {
			t.Errorf("after the v1 update, at v2: %+v %v", atV2.Spec, atV2.Annotations)
		}
	})
}

// Watchers of both versions at once each get the event at their version;
// lists too.
func TestHPAListWatchBothVersions(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	pb, js := clientset(t, encodings[0].contentType), clientset(t, encodings[1].contentType)
	watchers := map[string]watch.Interface{}
	for name, open := range map[string]func() (watch.Interface, error){
		"v1 protobuf": func() (watch.Interface, error) {
			return pb.AutoscalingV1().HorizontalPodAutoscalers(ns).Watch(ctx(t), metav1.ListOptions{})
		},
		"v1 json": func() (watch.Interface, error) {
			return js.AutoscalingV1().HorizontalPodAutoscalers(ns).Watch(ctx(t), metav1.ListOptions{})
		},
		"v2 protobuf": func() (watch.Interface, error) {
			return pb.AutoscalingV2().HorizontalPodAutoscalers(ns).Watch(ctx(t), metav1.ListOptions{})
		},
		"v2 json": func() (watch.Interface, error) {
			return js.AutoscalingV2().HorizontalPodAutoscalers(ns).Watch(ctx(t), metav1.ListOptions{})
		},
	} {
		w, err := open()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer w.Stop()
		watchers[name] = w
	}
	if _, err := pb.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx(t), hpaV2("w"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := js.AutoscalingV1().HorizontalPodAutoscalers(ns).Delete(ctx(t), "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, w := range watchers {
		for _, want := range []watch.EventType{watch.Added, watch.Deleted} {
			ev := next(t, name, w)
			if ev.Type != want {
				t.Fatalf("%s: got a %s event, want %s", name, ev.Type, want)
			}
			switch obj := ev.Object.(type) {
			case *autoscalingv1.HorizontalPodAutoscaler:
				if name[:2] != "v1" || obj.Annotations["autoscaling.alpha.kubernetes.io/metrics"] != wantMetricsAnnotation {
					t.Errorf("%s: %s event of %+v", name, ev.Type, obj.ObjectMeta)
				}
			case *autoscalingv2.HorizontalPodAutoscaler:
				if name[:2] != "v2" || len(obj.Spec.Metrics) != 1 || len(obj.Annotations) != 0 {
					t.Errorf("%s: %s event of %+v", name, ev.Type, obj)
				}
			default:
				t.Errorf("%s: %s event of a %T", name, ev.Type, ev.Object)
			}
		}
	}

	if _, err := js.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx(t), hpaV1("l"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list1, err := pb.AutoscalingV1().HorizontalPodAutoscalers(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list1.Items) != 1 || *list1.Items[0].Spec.TargetCPUUtilizationPercentage != 80 {
		t.Errorf("list at v1: %v %+v", err, list1)
	}
	list2, err := js.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list2.Items) != 1 || list2.Items[0].Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
		list2.Items[0].ResourceVersion != list1.Items[0].ResourceVersion {
		t.Errorf("list at v2: %v %+v", err, list2)
	}
}

func next(t *testing.T, name string, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("%s: the watch ended", name)
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no event", name)
	}
	return watch.Event{}
}

// The status subresource at v1 writes what v2 shows in currentMetrics;
// the main resource ignores status and /status ignores the spec, at
// either version.
func TestHPAStatus(t *testing.T) {
	t.Parallel()
	cs := clientset(t, encodings[0].contentType)
	ns := srv.CreateNamespace(t)
	v1, v2 := cs.AutoscalingV1().HorizontalPodAutoscalers(ns), cs.AutoscalingV2().HorizontalPodAutoscalers(ns)
	created, err := v1.Create(ctx(t), hpaV1("s"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status = autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 3, CurrentCPUUtilizationPercentage: ptr.To[int32](40)}
	created.Spec.MaxReplicas = 9
	withStatus, err := v1.UpdateStatus(ctx(t), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if withStatus.Spec.MaxReplicas != 3 || withStatus.Generation != 1 || withStatus.Status.CurrentReplicas != 2 {
		t.Errorf("status update: spec %+v, generation %d, status %+v", withStatus.Spec, withStatus.Generation, withStatus.Status)
	}
	atV2, err := v2.Get(ctx(t), "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := atV2.Status.CurrentMetrics; len(m) != 1 || *m[0].Resource.Current.AverageUtilization != 40 || m[0].Resource.Current.AverageValue != nil {
		t.Errorf("current metrics at v2: %+v", m)
	}
	patched, err := v2.Patch(ctx(t), "s", types.MergePatchType, []byte(`{"spec":{"maxReplicas":4},"status":{"desiredReplicas":7}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Status.DesiredReplicas != 3 || patched.Spec.MaxReplicas != 4 || patched.Generation != 2 {
		t.Errorf("main patch: status %+v, maxReplicas %d, generation %d", patched.Status, patched.Spec.MaxReplicas, patched.Generation)
	}
}

// Validation runs on the stored version at either version: kube's
// messages and field paths (v2's), recorded from kube-apiserver v1.37.2.
func TestHPAValidation(t *testing.T) {
	t.Parallel()
	cs := clientset(t, encodings[1].contentType)
	ns := srv.CreateNamespace(t)
	v1 := hpaV1("v1-bad")
	v1.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 0, TargetCPUUtilizationPercentage: ptr.To[int32](0)}
	_, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx(t), v1, metav1.CreateOptions{})
	checkInvalid(t, err, `HorizontalPodAutoscaler.autoscaling "v1-bad" is invalid: [spec.maxReplicas: Invalid value: 0: must be greater than or equal to `+"`minReplicas`"+`, `+
		`spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value, spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group, `+
		`spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0, spec.maxReplicas: Required value]`)

	v2 := hpaV2("v2-bad")
	v2.Spec.MinReplicas = ptr.To[int32](0)
	v2.Spec.Behavior.ScaleUp = &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.ScalingPolicySelect("Nope")),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: "X", Value: 1, PeriodSeconds: 1801}}}
	_, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx(t), v2, metav1.CreateOptions{})
	checkInvalid(t, err, `HorizontalPodAutoscaler.autoscaling "v2-bad" is invalid: [spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas, `+
		`spec.behavior.scaleUp.selectPolicy: Unsupported value: "Nope": supported values: "Disabled", "Max", "Min", `+
		`spec.behavior.scaleUp.policies[0].type: Unsupported value: "X": supported values: "Percent", "Pods", `+
		`spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800]`)

	_, err = cs.AutoscalingV1().HorizontalPodAutoscalers(ns).List(ctx(t), metav1.ListOptions{FieldSelector: "spec.maxReplicas=1"})
	if !apierrors.IsBadRequest(err) || err.Error() != `"spec.maxReplicas" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("field selector at v1: %v", err)
	}
}

func checkInvalid(t *testing.T, err error, want string) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Fatalf("got %v, want an Invalid error", err)
	}
	if got := status.Status().Message; got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
}

// Discovery lists both versions, v2 preferred, with one storage version.
func TestHPADiscovery(t *testing.T) {
	t.Parallel()
	d := clientset(t, encodings[1].contentType).Discovery()
	groups, err := d.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "autoscaling" && (g.PreferredVersion.Version != "v2" || len(g.Versions) != 2 || g.Versions[1].Version != "v1") {
			t.Errorf("autoscaling: %+v", g)
		}
	}
	for _, gv := range []string{"autoscaling/v1", "autoscaling/v2"} {
		list, err := d.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatal(err)
		}
		r := list.APIResources[0]
		if r.Name != "horizontalpodautoscalers" || r.ShortNames[0] != "hpa" || r.Categories[0] != "all" || r.StorageVersionHash != "qwQve8ut294=" ||
			len(list.APIResources) != 2 || list.APIResources[1].Name != "horizontalpodautoscalers/status" {
			t.Errorf("%s: %+v", gv, list.APIResources)
		}
	}
}

// Metadata views (the metadata client's PartialObjectMetadata, Table
// rows) show the stored object's metadata at every version, as kube's
// (its internal object's): none of v1's round-trip annotations.
func TestHPAMetadataAtV1(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	hpa := hpaV2("m")
	hpa.Annotations = map[string]string{"mine": "yes"}
	if _, err := clientset(t, encodings[0].contentType).AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx(t), hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mc := metadata.NewForConfigOrDie(srv.ClientConfig).Resource(autoscalingv1.SchemeGroupVersion.WithResource("horizontalpodautoscalers")).Namespace(ns)
	got, err := mc.Get(ctx(t), "m", metav1.GetOptions{})
	if err != nil || len(got.Annotations) != 1 || got.Annotations["mine"] != "yes" {
		t.Errorf("metadata at v1: %v %v", err, got)
	}
	list, err := mc.List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || len(list.Items[0].Annotations) != 1 {
		t.Errorf("metadata list at v1: %v %+v", err, list)
	}
}
