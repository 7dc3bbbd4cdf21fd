package workload_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/workload"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// rsStrategy is a workload as the resources declare one: the shared
// strategy plus defaults of its own.
type rsStrategy struct{ workload.Strategy }

func (rsStrategy) Default(obj runtime.Object) {
	if rs := obj.(*appsv1.ReplicaSet); rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptr.To[int32](1)
	}
}

var rsMain = rsStrategy{workload.NewStrategy("apps/v1", rest.DeleteDependents)}

func newRS(name string, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": name}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		},
	}
}

// stored is an object as the store keeps it: generation 3, a status.
func stored() *appsv1.ReplicaSet {
	rs := newRS("a", 2)
	rs.Generation = 3
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, ObservedGeneration: 3}
	return rs
}

func TestStrategyPrepareForCreate(t *testing.T) {
	rs := newRS("a", 2)
	rs.Generation = 7
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 5}
	rsMain.PrepareForCreate(context.Background(), rs)
	if rs.Generation != 1 || !apiequality.Semantic.DeepEqual(rs.Status, appsv1.ReplicaSetStatus{}) {
		t.Errorf("after PrepareForCreate: generation %d status %+v, want 1 and no status", rs.Generation, rs.Status)
	}
}

func TestStrategyPrepareForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name           string
		change         func(*appsv1.ReplicaSet)
		wantGeneration int64
	}{
		{"nothing changed", func(*appsv1.ReplicaSet) {}, 3},
		{"spec changed", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](4) }, 4},
		{"spec the same, written anew", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](2) }, 3},
		{"labels changed", func(rs *appsv1.ReplicaSet) { rs.Labels = map[string]string{"b": "c"} }, 3},
		{"annotations changed", func(rs *appsv1.ReplicaSet) { rs.Annotations = map[string]string{"b": "c"} }, 3},
		{"status only, which the endpoint ignores", func(rs *appsv1.ReplicaSet) { rs.Status.Replicas = 9 }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := stored()
			obj := old.DeepCopy()
			tc.change(obj)
			obj.Status = appsv1.ReplicaSetStatus{Replicas: 9} // a client's status is never kept
			rsMain.PrepareForUpdate(context.Background(), obj, old)
			if obj.Generation != tc.wantGeneration {
				t.Errorf("generation %d, want %d", obj.Generation, tc.wantGeneration)
			}
			if !apiequality.Semantic.DeepEqual(obj.Status, old.Status) {
				t.Errorf("status %+v, want the stored %+v", obj.Status, old.Status)
			}
		})
	}
}

func TestStatusStrategyPrepareForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		keepLabels bool
		wantLabels map[string]string
	}{
		{"labels may change", false, map[string]string{"new": "x"}},
		{"labels kept (deployments)", true, map[string]string{"app": "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := generic.StatusStrategy{Main: rsMain, GroupVersion: "apps/v1", KeepLabels: tc.keepLabels}
			old := stored()
			obj := old.DeepCopy()
			obj.Spec.Replicas = ptr.To[int32](8)
			obj.Spec.MinReadySeconds = 5
			obj.Labels = map[string]string{"new": "x"}
			obj.Status = appsv1.ReplicaSetStatus{Replicas: 4, ObservedGeneration: 3}
			s.PrepareForUpdate(context.Background(), obj, old)
			if !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
				t.Errorf("spec %+v, want the stored %+v", obj.Spec, old.Spec)
			}
			if obj.Status.Replicas != 4 || obj.Generation != 3 {
				t.Errorf("status.replicas %d generation %d, want 4 and 3", obj.Status.Replicas, obj.Generation)
			}
			if !apiequality.Semantic.DeepEqual(obj.Labels, tc.wantLabels) {
				t.Errorf("labels %v, want %v", obj.Labels, tc.wantLabels)
			}
		})
	}
}

func TestStatusStrategyForwards(t *testing.T) {
	var called bool
	s := generic.StatusStrategy{Main: rsMain, GroupVersion: "apps/v1", Validate: func(context.Context, runtime.Object, runtime.Object) field.ErrorList {
		called = true
		return field.ErrorList{field.Invalid(field.NewPath("status"), 1, "no")}
	}}
	if !s.NamespaceScoped() || s.AllowCreateOnUpdate() || !s.AllowUnconditionalUpdate() {
		t.Errorf("scope and update rules differ from the main strategy's")
	}
	rs := &appsv1.ReplicaSet{}
	s.Default(rs)
	if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 1 {
		t.Errorf("Default did not run the main strategy's defaults: %v", rs.Spec.Replicas)
	}
	if errs := s.ValidateUpdate(context.Background(), stored(), stored()); len(errs) != 1 || !called {
		t.Errorf("ValidateUpdate = %v, want Validate's one error", errs)
	}
	if errs := (generic.StatusStrategy{Main: rsMain, GroupVersion: "apps/v1"}).ValidateUpdate(context.Background(), stored(), stored()); errs != nil {
		t.Errorf("ValidateUpdate without Validate = %v, want none", errs)
	}
	if w := s.WarningsOnUpdate(context.Background(), stored(), stored()); w != nil {
		t.Errorf("WarningsOnUpdate = %q, want none", w)
	}
}

func TestResetFields(t *testing.T) {
	paths := func(m map[fieldpath.APIVersion]*fieldpath.Set) string {
		if len(m) != 1 || m["apps/v1"] == nil {
			return "not only apps/v1"
		}
		return m["apps/v1"].String()
	}
	for _, tc := range []struct {
		name     string
		strategy rest.ResetFieldsStrategy
		want     *fieldpath.Set
	}{
		{"main", rsMain, fieldpath.NewSet(fieldpath.MakePathOrDie("status"))},
		{"status", generic.StatusStrategy{Main: rsMain, GroupVersion: "apps/v1"}, fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))},
		{"status keeping labels", generic.StatusStrategy{Main: rsMain, GroupVersion: "apps/v1", KeepLabels: true},
			fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata", "labels"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := paths(tc.strategy.GetResetFields()); got != tc.want.String() {
				t.Errorf("reset fields %s, want %s", got, tc.want)
			}
		})
	}
}

func TestNameWarnings(t *testing.T) {
	if w := workload.NameWarnings("web-1"); w != nil {
		t.Errorf("a DNS label: warnings %q", w)
	}
	want := `metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]`
	if w := workload.NameWarnings("web.1"); len(w) != 1 || w[0] != want {
		t.Errorf("a name with a dot: warnings %q, want %q", w, want)
	}
}

// scaleTo is the UpdatedObjectInfo of a client that sets a Scale's replicas.
type scaleTo int32

func (scaleTo) Preconditions() *metav1.Preconditions { return nil }

func (n scaleTo) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	scale := old.DeepCopyObject().(*autoscalingv1.Scale)
	scale.Spec.Replicas = int32(n)
	return scale, nil
}

// TestStore drives the strategies through a Store on etcd, with the
// status and scale subresources a workload declares.
func TestStore(t *testing.T) {
	etcd := etcdtest.Start(t)
	r := workload.Declare(workload.Kind[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]{
		Strategy: rsMain,
		Scale:    generic.WorkloadScale[*appsv1.ReplicaSet](),
	})
	if r.Name != "replicasets" || r.Singular != "replicaset" || r.Kind != "ReplicaSet" || !r.Namespaced || r.ShortNames != nil {
		t.Errorf("declared %s/%s/%s namespaced %t short names %q, want replicasets/replicaset/ReplicaSet, namespaced, none",
			r.Name, r.Singular, r.Kind, r.Namespaced, r.ShortNames)
	}
	served := map[string]rest.Storage{}
	getter := generic.UndecoratedRESTOptions{Factory: etcd3.NewFactory(etcd.Client), Prefix: "/" + t.Name()}
	store, err := r.Install(schema.GroupVersion{Group: "apps", Version: "v1"}, getter, served)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	status := served["replicasets/status"].(rest.Updater)
	scale := served["replicasets/scale"].(interface {
		rest.Getter
		rest.Updater
	})
	ctx := request.WithNamespace(context.Background(), "ns")
	get := func() *appsv1.ReplicaSet {
		t.Helper()
		obj, err := store.Get(ctx, "a", &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*appsv1.ReplicaSet)
	}
	update := func(u rest.Updater, obj *appsv1.ReplicaSet) {
		t.Helper()
		if _, _, err := u.Update(ctx, "a", &rest.DefaultUpdatedObjectInfo{Obj: obj}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	rs := newRS("a", 2)
	rs.Status.Replicas = 5
	if _, err := store.Create(ctx, rs, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Generation != 1 || got.Status.Replicas != 0 {
		t.Fatalf("created: generation %d status.replicas %d, want 1 and 0", got.Generation, got.Status.Replicas)
	}

	rs = get()
	rs.Status.Replicas = 2
	update(status, rs)
	rs = get()
	rs.Spec.MinReadySeconds = 10
	rs.Status.Replicas = 7
	update(store, rs)
	if got := get(); got.Generation != 2 || got.Status.Replicas != 2 || got.Spec.MinReadySeconds != 10 {
		t.Errorf("after a spec update: generation %d status.replicas %d minReadySeconds %d, want 2, 2 (kept), 10",
			got.Generation, got.Status.Replicas, got.Spec.MinReadySeconds)
	}
	rs = get()
	rs.Spec.MinReadySeconds = 20
	rs.Status.Replicas = 3
	update(status, rs)
	if got := get(); got.Generation != 2 || got.Status.Replicas != 3 || got.Spec.MinReadySeconds != 10 {
		t.Errorf("after a status update: generation %d status.replicas %d minReadySeconds %d, want 2, 3, 10 (kept)",
			got.Generation, got.Status.Replicas, got.Spec.MinReadySeconds)
	}

	obj, err := scale.Get(ctx, "a", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := obj.(*autoscalingv1.Scale); s.Spec.Replicas != 2 || s.Status.Replicas != 3 || s.Status.Selector != "app=a" {
		t.Errorf("scale: %+v %+v, want replicas 2, 3 running, selector app=a", s.Spec, s.Status)
	}
	dryRun := &metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}
	obj, _, err = scale.Update(ctx, "a", scaleTo(6), nil, nil, false, dryRun)
	if err != nil {
		t.Fatal(err)
	}
	if s := obj.(*autoscalingv1.Scale); s.Spec.Replicas != 6 {
		t.Errorf("dry-run scale: replicas %d, want 6", s.Spec.Replicas)
	}
	if got := get(); *got.Spec.Replicas != 2 || got.Generation != 2 {
		t.Errorf("after a dry-run scale: replicas %d generation %d, want 2 and 2 (unchanged)", *got.Spec.Replicas, got.Generation)
	}
	if _, _, err := scale.Update(ctx, "a", scaleTo(6), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(); *got.Spec.Replicas != 6 || got.Generation != 3 || got.Status.Replicas != 3 {
		t.Errorf("after scaling: replicas %d generation %d status.replicas %d, want 6, 3, 3", *got.Spec.Replicas, got.Generation, got.Status.Replicas)
	}
}
