package generic_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// gracefulStrategy deletes gracefully, by default after gracePeriod
// seconds (kube's pods, without their special cases).
type gracefulStrategy struct{ generic.BaseStrategy }

const gracePeriod = 15

func (gracefulStrategy) CheckGracefulDelete(_ context.Context, _ runtime.Object, options *metav1.DeleteOptions) bool {
	if options.GracePeriodSeconds == nil {
		options.GracePeriodSeconds = ptr.To[int64](gracePeriod)
	}
	return true
}

// orphaningStrategy orphans dependents unless told otherwise (kube's
// legacy workloads).
type orphaningStrategy struct{ generic.BaseStrategy }

func (orphaningStrategy) DefaultGarbageCollectionPolicy(context.Context) rest.GarbageCollectionPolicy {
	return rest.OrphanDependents
}

func configMapResource(strategy generic.Strategy) generic.Resource {
	return generic.Resource{
		Name: "configmaps", Kind: "ConfigMap", Namespaced: true,
		New:      func() runtime.Object { return &corev1.ConfigMap{} },
		NewList:  func() runtime.Object { return &corev1.ConfigMapList{} },
		Strategy: strategy,
	}
}

// build builds r over an etcd of t's own.
func build(t *testing.T, r generic.Resource) map[string]rest.Storage {
	t.Helper()
	resources := map[string]rest.Storage{}
	store, err := r.Install(rcGV, registrytest.NewGetter(t), resources)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Destroy)
	return resources
}

// TestStoreConformance runs the registry's suite on the generic Store
// alone, with the strategies that steer its paths: plain, graceful,
// orphaning, cluster-scoped returning the deleted object, and with
// status (the replication controllers of resource_test.go).
func TestStoreConformance(t *testing.T) {
	t.Parallel()
	cm := func(name string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
	}
	orphaning := configMapResource(orphaningStrategy{generic.BaseStrategy{Namespaced: true}})
	var orphaningStore rest.Storage
	for _, tc := range []struct {
		name     string
		resource generic.Resource
		tester   registrytest.Tester
	}{
		{"plain", configMapResource(generic.BaseStrategy{Namespaced: true}), registrytest.Tester{AllowUnconditionalUpdate: true}},
		{"graceful", configMapResource(gracefulStrategy{generic.BaseStrategy{Namespaced: true}}),
			registrytest.Tester{AllowUnconditionalUpdate: true, GracePeriod: gracePeriod}},
		// Deletes leave the orphan finalizer, which the garbage collector
		// removes.
		{"orphaning", orphaning, registrytest.Tester{AllowUnconditionalUpdate: true, Finish: func(ctx context.Context, name string) error {
			return removeFinalizers(ctx, orphaningStore, name)
		}}},
		{"cluster-scoped", generic.Resource{
			Name: "nodes", Kind: "Node",
			New:                 func() runtime.Object { return &corev1.Node{} },
			NewList:             func() runtime.Object { return &corev1.NodeList{} },
			ReturnDeletedObject: true,
		}, registrytest.Tester{
			AllowUnconditionalUpdate: true,
			Valid:                    func(name string) runtime.Object { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} },
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := tc.tester
			tr.Storage = build(t, tc.resource)[tc.resource.Name].(registrytest.ResourceStorage)
			if tc.name == "orphaning" {
				orphaningStore = tr.Storage
			}
			if tr.Valid == nil {
				tr.Valid = cm
			}
			tr.Run(t)
		})
	}
	t.Run("with status", func(t *testing.T) {
		t.Parallel()
		resources := build(t, rcResource(&hookLog{}))
		tr := registrytest.Tester{
			Storage: resources["replicationcontrollers"].(registrytest.ResourceStorage),
			Valid:   func(name string) runtime.Object { return newRC(name, 1) },
			Invalid: func(name string) runtime.Object {
				rc := newRC(name, 1)
				rc.Labels = map[string]string{"refuse": "yes"}
				return rc
			},
			Change:                   func(obj runtime.Object) { obj.(*corev1.ReplicationController).Spec.Replicas = ptr.To[int32](3) },
			AllowUnconditionalUpdate: true,
			Status: &registrytest.StatusCheck{
				Storage:      resources["replicationcontrollers/status"].(rest.Updater),
				ChangeSpec:   func(obj runtime.Object) { obj.(*corev1.ReplicationController).Spec.Replicas = ptr.To[int32](4) },
				ChangeStatus: func(obj runtime.Object) { obj.(*corev1.ReplicationController).Status.Replicas = 2 },
			},
		}
		tr.Run(t)
	})
}

// removeFinalizers removes every finalizer of name, as the garbage
// collector does once it has orphaned the dependents.
func removeFinalizers(ctx context.Context, s rest.Storage, name string) error {
	obj, err := s.(rest.Getter).Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm := obj.(*corev1.ConfigMap)
	cm.Finalizers = nil
	_, _, err = s.(rest.Updater).Update(ctx, name, &rest.DefaultUpdatedObjectInfo{Obj: cm}, nil, nil, false, &metav1.UpdateOptions{})
	return err
}

func getCM(t *testing.T, ctx context.Context, s registrytest.ResourceStorage, name string) *corev1.ConfigMap {
	t.Helper()
	obj, err := s.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return obj.(*corev1.ConfigMap)
}

func createCM(t *testing.T, ctx context.Context, s registrytest.ResourceStorage, name string, finalizers ...string) *corev1.ConfigMap {
	t.Helper()
	obj, err := s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return obj.(*corev1.ConfigMap)
}

// TestGracefulDeletion: a graceful deletion may only be shortened; a
// shorter grace period moves the deletionTimestamp back by the
// difference, a dry run of it moves nothing, and a zero one deletes.
func TestGracefulDeletion(t *testing.T) {
	t.Parallel()
	s := build(t, configMapResource(gracefulStrategy{generic.BaseStrategy{Namespaced: true}}))["configmaps"].(registrytest.ResourceStorage)
	ctx := request.WithNamespace(context.Background(), "ns")
	createCM(t, ctx, s, "a")
	if _, now, err := s.Delete(ctx, "a", nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil || now {
		t.Fatalf("graceful delete: deleted at once %v, %v", now, err)
	}
	first := getCM(t, ctx, s, "a")
	if first.DeletionGracePeriodSeconds == nil || *first.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("deletionGracePeriodSeconds %v, want 30", first.DeletionGracePeriodSeconds)
	}
	for _, tc := range []struct {
		opts *metav1.DeleteOptions
		now  bool // kube reports a dry run that would delete as deleted
	}{
		{&metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](10), DryRun: []string{metav1.DryRunAll}}, false},
		{&metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), DryRun: []string{metav1.DryRunAll}}, true},
		{&metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](60)}, false},
		{&metav1.DeleteOptions{}, false},
	} {
		opts := tc.opts
		if _, now, err := s.Delete(ctx, "a", nil, opts); err != nil || now != tc.now {
			t.Errorf("delete %+v: deleted at once %v, %v; want %v", opts, now, err, tc.now)
		}
		if got := getCM(t, ctx, s, "a"); got.ResourceVersion != first.ResourceVersion {
			t.Errorf("delete %+v changed the object: resourceVersion %s -> %s", opts, first.ResourceVersion, got.ResourceVersion)
		}
	}
	if _, now, err := s.Delete(ctx, "a", nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](10)}); err != nil || now {
		t.Fatalf("shortening: deleted at once %v, %v", now, err)
	}
	shorter := getCM(t, ctx, s, "a")
	if g := shorter.DeletionGracePeriodSeconds; g == nil || *g != 10 {
		t.Errorf("shortened deletionGracePeriodSeconds %v, want 10", g)
	}
	if d := first.DeletionTimestamp.Sub(shorter.DeletionTimestamp.Time); d < 19*time.Second || d > 21*time.Second {
		t.Errorf("shortening by 20s moved the deletionTimestamp by %v", d)
	}
	if _, now, err := s.Delete(ctx, "a", nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil || !now {
		t.Fatalf("delete with no grace period: deleted at once %v, %v", now, err)
	}
	if _, err := s.Get(ctx, "a", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after the deletion: %v, want NotFound", err)
	}
}

// TestDeletePropagation: the propagation policy is recorded as kube's
// finalizers (the strategy's default when the client names none), and
// a dry run records nothing.
func TestDeletePropagation(t *testing.T) {
	t.Parallel()
	s := build(t, configMapResource(orphaningStrategy{generic.BaseStrategy{Namespaced: true}}))["configmaps"].(registrytest.ResourceStorage)
	ctx := request.WithNamespace(context.Background(), "ns")
	for _, tc := range []struct {
		name   string
		policy *metav1.DeletionPropagation
		want   []string // finalizers; nil: deleted at once
	}{
		{"default orphans", nil, []string{metav1.FinalizerOrphanDependents}},
		{"foreground", ptr.To(metav1.DeletePropagationForeground), []string{metav1.FinalizerDeleteDependents}},
		{"background", ptr.To(metav1.DeletePropagationBackground), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			created := createCM(t, ctx, s, name)
			opts := &metav1.DeleteOptions{PropagationPolicy: tc.policy, DryRun: []string{metav1.DryRunAll}}
			if _, _, err := s.Delete(ctx, name, nil, opts); err != nil {
				t.Fatalf("dry-run delete: %v", err)
			}
			if got := getCM(t, ctx, s, name); got.ResourceVersion != created.ResourceVersion || len(got.Finalizers) != 0 {
				t.Errorf("a dry-run delete wrote: finalizers %q, resourceVersion %s -> %s", got.Finalizers, created.ResourceVersion, got.ResourceVersion)
			}
			opts.DryRun = nil
			_, now, err := s.Delete(ctx, name, nil, opts)
			if err != nil || now != (tc.want == nil) {
				t.Fatalf("delete: deleted at once %v, %v", now, err)
			}
			if tc.want == nil {
				return
			}
			got := getCM(t, ctx, s, name)
			if !slices.Equal(got.Finalizers, tc.want) || got.DeletionTimestamp == nil {
				t.Errorf("after delete: finalizers %q deletionTimestamp %v, want %q and set", got.Finalizers, got.DeletionTimestamp, tc.want)
			}
		})
	}
}

// TestFinalizersOnUpdate: removing the last finalizer of an object being
// deleted deletes it, unless the update is a dry run; removing one of
// two keeps it.
func TestFinalizersOnUpdate(t *testing.T) {
	t.Parallel()
	s := build(t, configMapResource(generic.BaseStrategy{Namespaced: true}))["configmaps"].(registrytest.ResourceStorage)
	ctx := request.WithNamespace(context.Background(), "ns")
	createCM(t, ctx, s, "a", "example.com/one", "example.com/two")
	if _, now, err := s.Delete(ctx, "a", nil, nil); err != nil || now {
		t.Fatalf("delete: deleted at once %v, %v", now, err)
	}
	update := func(finalizers []string, dryRun bool) {
		t.Helper()
		cm := getCM(t, ctx, s, "a")
		cm.Finalizers = finalizers
		opts := &metav1.UpdateOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if _, _, err := s.Update(ctx, "a", &rest.DefaultUpdatedObjectInfo{Obj: cm}, nil, nil, false, opts); err != nil {
			t.Fatalf("update to finalizers %q: %v", finalizers, err)
		}
	}
	update([]string{"example.com/two"}, false)
	if got := getCM(t, ctx, s, "a"); !slices.Equal(got.Finalizers, []string{"example.com/two"}) || got.DeletionTimestamp == nil {
		t.Errorf("after removing one finalizer: %q, deletionTimestamp %v", got.Finalizers, got.DeletionTimestamp)
	}
	update(nil, true)
	getCM(t, ctx, s, "a")
	update(nil, false)
	if _, err := s.Get(ctx, "a", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after the last finalizer went: %v, want NotFound", err)
	}
}

// TestCreateOverDeleting: a create of a name whose object is being
// deleted says so, as kube does.
func TestCreateOverDeleting(t *testing.T) {
	t.Parallel()
	s := build(t, configMapResource(generic.BaseStrategy{Namespaced: true}))["configmaps"].(registrytest.ResourceStorage)
	ctx := request.WithNamespace(context.Background(), "ns")
	createCM(t, ctx, s, "a", "example.com/hold")
	if _, _, err := s.Delete(ctx, "a", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err := s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, nil, &metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) || err.Error() != `object is being deleted: configmaps "a" already exists` {
		t.Errorf("create over an object being deleted: %v", err)
	}
}
