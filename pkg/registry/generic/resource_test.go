package generic_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// newOptions gives every resource a raw etcd3 store under a prefix of the
// test's own: the tests of one etcd never see each other's objects.
func newOptions(t *testing.T, etcd *etcdtest.Etcd) generic.RESTOptionsGetter {
	return generic.UndecoratedRESTOptions{Factory: etcd3.NewFactory(etcd.Client), Prefix: "/" + t.Name()}
}

var rcGV = schema.GroupVersion{Version: "v1"}

// rcStrategy is a small strategy over replication controllers: status is
// the controller's, and a "refuse" label fails validation.
type rcStrategy struct{ generic.BaseStrategy }

func (rcStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.ResetStatus(obj)
	generic.StartGeneration(obj)
}

func (rcStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
	generic.BumpGenerationOnSpecChange(obj, old)
}

func (rcStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return refused(obj)
}

func (rcStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return refused(obj)
}

func refused(obj runtime.Object) field.ErrorList {
	if v, ok := obj.(*corev1.ReplicationController).Labels["refuse"]; ok {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), v, "refused")}
	}
	return nil
}

type rcStatusStrategy struct{ rcStrategy }

func (rcStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepAllButStatus(obj, old)
}

// hookLog records the hooks that ran, in order.
type hookLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *hookLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

// take returns the calls recorded since the last take.
func (l *hookLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	calls := l.calls
	l.calls = nil
	return calls
}

func (l *hookLog) hooks() generic.Hooks {
	return generic.Hooks{
		BeginCreate: func(_ context.Context, obj runtime.Object, options *metav1.CreateOptions) (generic.FinishFunc, error) {
			name := obj.(*corev1.ReplicationController).Name
			l.add("begin create %s", name)
			return func(_ context.Context, success bool) { l.add("finish create %s %v", name, success) }, nil
		},
		BeginUpdate: func(_ context.Context, obj, _ runtime.Object, _ *metav1.UpdateOptions) (generic.FinishFunc, error) {
			name := obj.(*corev1.ReplicationController).Name
			l.add("begin update %s", name)
			return func(_ context.Context, success bool) { l.add("finish update %s %v", name, success) }, nil
		},
		AfterDelete: func(_ context.Context, obj runtime.Object, _ *metav1.DeleteOptions) {
			l.add("after delete %s", obj.(*corev1.ReplicationController).Name)
		},
	}
}

// rcResource declares replication controllers with the hooks of log and
// a status subresource.
func rcResource(log *hookLog) generic.Resource {
	return generic.Resource{
		Name: "replicationcontrollers", Singular: "replicationcontroller", Kind: "ReplicationController", Namespaced: true,
		New:            func() runtime.Object { return &corev1.ReplicationController{} },
		NewList:        func() runtime.Object { return &corev1.ReplicationControllerList{} },
		Strategy:       rcStrategy{generic.BaseStrategy{Namespaced: true}},
		StatusStrategy: rcStatusStrategy{rcStrategy{generic.BaseStrategy{Namespaced: true}}},
		Hooks:          log.hooks(),
		Destroy:        func() { log.add("destroy") },
	}
}

func newRC(name string, replicas int32) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ReplicationControllerSpec{Replicas: ptr.To(replicas), Selector: map[string]string{"app": name}},
	}
}

func put(ctx context.Context, t *testing.T, u rest.Updater, obj runtime.Object) *corev1.ReplicationController {
	t.Helper()
	out, _, err := u.Update(ctx, obj.(*corev1.ReplicationController).Name, &rest.DefaultUpdatedObjectInfo{Obj: obj}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	return out.(*corev1.ReplicationController)
}

func wantCalls(t *testing.T, log *hookLog, want ...string) {
	t.Helper()
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("hooks ran %q, want %q", got, want)
	}
}

// TestResourceHooks: the hooks of a declaration run around the writes of
// the Store it builds, and AfterDelete also when a status update ends a
// deletion (as kube's services release their IPs then); the Begin hooks
// never run on /status.
func TestResourceHooks(t *testing.T) {
	etcd := etcdtest.Start(t)
	log := &hookLog{}
	resources := map[string]rest.Storage{}
	store, err := rcResource(log).Install(rcGV, newOptions(t, etcd), resources)
	if err != nil {
		t.Fatal(err)
	}
	status := resources["replicationcontrollers/status"].(rest.Updater)
	ctx := request.WithNamespace(context.Background(), "ns")

	created, err := store.Create(ctx, newRC("a", 1), nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantCalls(t, log, "begin create a", "finish create a true")
	rc := created.(*corev1.ReplicationController)
	if rc.Generation != 1 {
		t.Errorf("generation after create = %d, want 1", rc.Generation)
	}

	refused := newRC("b", 1)
	refused.Labels = map[string]string{"refuse": "yes"}
	if _, err := store.Create(ctx, refused, nil, &metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("create of an invalid object: %v, want Invalid", err)
	}
	wantCalls(t, log, "begin create b", "finish create b false")

	rc.Spec.Replicas = ptr.To[int32](2)
	rc = put(ctx, t, store, rc)
	wantCalls(t, log, "begin update a", "finish update a true")
	if rc.Generation != 2 {
		t.Errorf("generation after a spec change = %d, want 2", rc.Generation)
	}

	// /status changes status only, with no Begin hook.
	rc.Spec.Replicas = ptr.To[int32](5)
	rc.Status.Replicas = 2
	rc.Finalizers = []string{"example.com/hold"}
	rc = put(ctx, t, status, rc)
	wantCalls(t, log)
	if *rc.Spec.Replicas != 2 || rc.Status.Replicas != 2 || rc.Generation != 2 {
		t.Errorf("after a status update: spec.replicas %d status.replicas %d generation %d, want 2 2 2",
			*rc.Spec.Replicas, rc.Status.Replicas, rc.Generation)
	}

	// The main endpoint still keeps status: the status subresource did
	// not change the Store it shares.
	rc.Status.Replicas = 7
	rc = put(ctx, t, store, rc)
	wantCalls(t, log, "begin update a", "finish update a true")
	if rc.Status.Replicas != 2 {
		t.Errorf("status.replicas after a main update = %d, want 2 (kept)", rc.Status.Replicas)
	}

	// A finalizer holds the deletion; removing it through /status ends
	// it, and AfterDelete runs there.
	if _, now, err := store.Delete(ctx, "a", nil, nil); err != nil || now {
		t.Fatalf("delete with a finalizer: deleted now %v, err %v; want pending", now, err)
	}
	wantCalls(t, log)
	rc, err = getRC(ctx, store, "a")
	if err != nil {
		t.Fatal(err)
	}
	rc.Finalizers = nil
	put(ctx, t, status, rc)
	wantCalls(t, log, "after delete a")
	if _, err := getRC(ctx, store, "a"); !apierrors.IsNotFound(err) {
		t.Errorf("get after the last finalizer went: %v, want NotFound", err)
	}

	if _, err := store.Create(ctx, newRC("c", 1), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, now, err := store.Delete(ctx, "c", nil, nil); err != nil || !now {
		t.Fatalf("delete: deleted now %v, err %v", now, err)
	}
	wantCalls(t, log, "begin create c", "finish create c true", "after delete c")

	store.Destroy()
	wantCalls(t, log, "destroy")
}

func getRC(ctx context.Context, store *generic.Store, name string) (*corev1.ReplicationController, error) {
	obj, err := store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ReplicationController), nil
}

// TestResourceSubresources: declared subresources are built from the
// resource's Store and served at their paths; bad or clashing paths, and
// a strategy of the wrong scope, fail the build and release what the
// declaration holds.
func TestResourceSubresources(t *testing.T) {
	etcd := etcdtest.Start(t)
	opts := newOptions(t, etcd)

	log := &hookLog{}
	var builtFrom *generic.Store
	r := rcResource(log)
	r.Subresources = map[string]generic.SubresourceFunc{
		"replicationcontrollers/pause": func(main *generic.Store) (rest.Storage, error) {
			builtFrom = main
			return generic.NewStatusREST(main, rcStatusStrategy{rcStrategy{generic.BaseStrategy{Namespaced: true}}}), nil
		},
		"pausers": generic.UpdateSubresource(rcStatusStrategy{rcStrategy{generic.BaseStrategy{Namespaced: true}}}),
	}
	resources := map[string]rest.Storage{}
	store, err := r.Install(rcGV, opts, resources)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	if builtFrom != store {
		t.Error("the subresource was not built from the resource's Store")
	}
	var paths []string
	for p := range resources {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{"pausers", "replicationcontrollers", "replicationcontrollers/pause", "replicationcontrollers/status"}
	if !slices.Equal(paths, want) {
		t.Errorf("served %q, want %q", paths, want)
	}

	for _, tc := range []struct {
		name   string
		change func(r *generic.Resource)
	}{
		{"another resource's subresource", func(r *generic.Resource) {
			r.Subresources = map[string]generic.SubresourceFunc{"pods/binding": generic.UpdateSubresource(r.StatusStrategy)}
		}},
		{"a nested path", func(r *generic.Resource) {
			r.Subresources = map[string]generic.SubresourceFunc{"replicationcontrollers/a/b": generic.UpdateSubresource(r.StatusStrategy)}
		}},
		{"status declared twice", func(r *generic.Resource) {
			r.Subresources = map[string]generic.SubresourceFunc{"replicationcontrollers/status": generic.UpdateSubresource(r.StatusStrategy)}
		}},
		{"a strategy of the wrong scope", func(r *generic.Resource) {
			r.Strategy = rcStrategy{generic.BaseStrategy{Namespaced: false}}
		}},
		{"a path served already", func(r *generic.Resource) { r.Name = "pausers" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &hookLog{}
			r := rcResource(log)
			tc.change(&r)
			served := map[string]rest.Storage{"pausers": resources["pausers"]}
			if _, err := r.Install(rcGV, opts, served); err == nil {
				t.Fatal("installed, want an error")
			}
			wantCalls(t, log, "destroy")
			if len(served) != 1 {
				t.Errorf("a failed install served %d paths", len(served)-1)
			}
		})
	}
}
