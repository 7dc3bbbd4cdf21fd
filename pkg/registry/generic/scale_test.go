package generic_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestWorkloadScaleAccessor(t *testing.T) {
	for _, tc := range []struct {
		name         string
		accessor     *generic.ScaleAccessor
		obj          runtime.Object
		spec, status int32
		selector     string
	}{
		{"a label selector", generic.WorkloadScale[*appsv1.Deployment](), &appsv1.Deployment{
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "a"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"x", "y"}}},
			}},
			Status: appsv1.DeploymentStatus{Replicas: 2},
		}, 3, 2, "app=a,tier in (x,y)"},
		{"a map of labels", generic.WorkloadScale[*corev1.ReplicationController](), &corev1.ReplicationController{
			Spec:   corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](1), Selector: map[string]string{"b": "2", "a": "1"}},
			Status: corev1.ReplicationControllerStatus{Replicas: 4},
		}, 1, 4, "a=1,b=2"},
		{"no replicas", generic.WorkloadScale[*appsv1.StatefulSet](), &appsv1.StatefulSet{}, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, status, selector, err := tc.accessor.Replicas(tc.obj)
			if err != nil || spec != tc.spec || status != tc.status || selector != tc.selector {
				t.Errorf("Replicas = %d, %d, %q, %v; want %d, %d, %q", spec, status, selector, err, tc.spec, tc.status, tc.selector)
			}
			tc.accessor.SetReplicas(tc.obj, 9)
			if spec, _, _, _ := tc.accessor.Replicas(tc.obj); spec != 9 {
				t.Errorf("after SetReplicas(9), spec.replicas = %d", spec)
			}
		})
	}

	_, _, _, err := generic.WorkloadScale[*appsv1.ReplicaSet]().Replicas(&appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{
		Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}},
	}})
	if err == nil {
		t.Error("an invalid selector: no error")
	}

	if paths := generic.WorkloadScale[*appsv1.Deployment]().ReplicasPaths; paths != nil {
		t.Errorf("no versions: paths %v, want none (the served version)", paths)
	}
	paths := generic.WorkloadScale[*appsv1.Deployment]("apps/v1beta2", "apps/v1").ReplicasPaths
	var versions []string
	for v, p := range paths {
		versions = append(versions, v)
		if p.String() != ".spec.replicas" {
			t.Errorf("%s: path %s, want .spec.replicas", v, p)
		}
	}
	slices.Sort(versions)
	if !slices.Equal(versions, []string{"apps/v1", "apps/v1beta2"}) {
		t.Errorf("paths of %q, want apps/v1 and apps/v1beta2", versions)
	}
}

func TestWorkloadScaleRefusesOtherShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func()
	}{
		{"no spec.replicas", func() { generic.WorkloadScale[*corev1.Pod]() }},
		{"no status.replicas", func() { generic.WorkloadScale[*corev1.PodTemplate]() }},
		{"not a struct", func() { generic.WorkloadScale[*metav1.Status]() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.build()
		})
	}
}

// scaleTo is the UpdatedObjectInfo of a client that reads the Scale and
// sets its replicas, keeping its managed fields as a field manager would
// find them.
type scaleTo int32

func (scaleTo) Preconditions() *metav1.Preconditions { return nil }

func (n scaleTo) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	scale := old.DeepCopyObject().(*autoscalingv1.Scale)
	scale.Spec.Replicas = int32(n)
	return scale, nil
}

// TestScaleSubresource: /scale writes through the main endpoint (its
// strategy bumps the generation, its BeginUpdate hook runs), and keeps
// the owners of the replicas in the versions the kind lists.
func TestScaleSubresource(t *testing.T) {
	etcd := etcdtest.Start(t)
	log := &hookLog{}
	r := rcResource(log)
	r.Scale = generic.WorkloadScale[*corev1.ReplicationController]("v1", "extensions/v1beta1")
	resources := map[string]rest.Storage{}
	store, err := r.Install(rcGV, newOptions(t, etcd), resources)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	scales := resources["replicationcontrollers/scale"].(interface {
		rest.Getter
		rest.Updater
	})
	ctx := request.WithNamespace(context.Background(), "ns")

	owns := func(manager, apiVersion string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{
			Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: apiVersion,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)},
		}
	}
	rc := newRC("a", 1)
	rc.ManagedFields = []metav1.ManagedFieldsEntry{owns("current", "v1"), owns("listed", "extensions/v1beta1"), owns("unlisted", "v1beta9")}
	if _, err := store.Create(ctx, rc, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log.take()

	got, err := scales.Get(ctx, "a", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(*autoscalingv1.Scale); s.Spec.Replicas != 1 || s.Status.Selector != "app=a" {
		t.Errorf("scale: replicas %d selector %q, want 1 and app=a", s.Spec.Replicas, s.Status.Selector)
	}

	out, _, err := scales.Update(ctx, "a", scaleTo(4), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.(*autoscalingv1.Scale); s.Spec.Replicas != 4 {
		t.Errorf("scale after the update: replicas %d, want 4", s.Spec.Replicas)
	}
	wantCalls(t, log, "begin update a", "finish update a true")
	rc, err = getRC(ctx, store, "a")
	if err != nil {
		t.Fatal(err)
	}
	if *rc.Spec.Replicas != 4 || rc.Generation != 2 {
		t.Errorf("after scaling: spec.replicas %d generation %d, want 4 and 2", *rc.Spec.Replicas, rc.Generation)
	}
	var managers []string
	for _, e := range rc.ManagedFields {
		managers = append(managers, e.Manager+"@"+e.APIVersion)
	}
	// As kube's: the owners of the replicas in the versions the kind
	// lists keep them, recorded at the served version; others lose them.
	slices.Sort(managers)
	if want := []string{"current@v1", "listed@v1"}; !slices.Equal(managers, want) {
		t.Errorf("managers of the replicas after scaling: %q, want %q", managers, want)
	}
}
