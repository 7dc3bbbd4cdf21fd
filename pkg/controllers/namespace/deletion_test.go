package namespace

import (
	"context"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/controllertest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// fixture is the core group on an etcd of its own, a controller over it,
// and a namespace "doomed" being deleted with what the test put in it.
type fixture struct {
	t      *testing.T
	core   core.LegacyRESTStorage
	c      *Controller
	ctx    context.Context // doomed's
	global context.Context
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	legacy, info, err := core.RESTStorageProvider{NoPodServiceAccount: true}.NewGroupStorage(controllertest.NewGetter(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	f := &fixture{t: t, core: legacy, ctx: request.WithNamespace(context.Background(), "doomed"),
		global: request.WithNamespace(context.Background(), "")}
	f.c = New(legacy.Namespaces, legacy.NamespaceFinalize, legacy.NamespaceStatus, ServedResources([]rest.APIGroupInfo{info}), nil)
	if _, err := legacy.Namespaces.Create(f.global, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		st := legacy.ConfigMaps
		if _, ok := obj.(*corev1.Pod); ok {
			st = legacy.Pods
		}
		if _, err := st.Create(f.ctx, obj, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := legacy.Namespaces.Delete(f.global, "doomed", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// sync runs one attempt and returns the namespace after it (nil: gone).
func (f *fixture) sync() *corev1.Namespace {
	f.t.Helper()
	if _, err := f.c.sync(context.Background(), "doomed"); err != nil {
		f.t.Logf("sync: %v", err)
	}
	obj, err := f.core.Namespaces.Get(f.global, "doomed", &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*corev1.Namespace)
}

func (f *fixture) clearFinalizers(st rest.Updater, name string, obj runtime.Object) {
	f.t.Helper()
	obj.(metav1.Object).SetFinalizers(nil)
	if _, _, err := st.Update(f.ctx, name, &rest.DefaultUpdatedObjectInfo{Obj: obj}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func condition(ns *corev1.Namespace, t corev1.NamespaceConditionType) corev1.NamespaceCondition {
	for _, c := range ns.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.NamespaceCondition{}
}

func wantCondition(t *testing.T, ns *corev1.Namespace, ct corev1.NamespaceConditionType, status corev1.ConditionStatus, reason, message string) {
	t.Helper()
	c := condition(ns, ct)
	if c.Status != status || c.Reason != reason || c.Message != message || c.LastTransitionTime.IsZero() {
		t.Errorf("%s = %+v, want %s %s %q", ct, c, status, reason, message)
	}
}

// TestConditionsWhileFinalizersRemain: objects kept by finalizers are
// counted, by resource and by finalizer, in kube's words; once they go,
// the conditions turn to their all-is-well form and the namespace goes.
func TestConditionsWhileFinalizersRemain(t *testing.T) {
	t.Parallel()
	kept := func(name string, finalizers ...string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}
	}
	f := newFixture(t, kept("a", "example.com/keep"), kept("b", "example.com/keep", "example.com/other"), kept("c"))
	ns := f.sync()
	if ns == nil {
		t.Fatal("the namespace went with content left")
	}
	if len(ns.Status.Conditions) != 5 {
		t.Errorf("conditions %+v, want kube's five", ns.Status.Conditions)
	}
	wantCondition(t, ns, corev1.NamespaceDeletionDiscoveryFailure, corev1.ConditionFalse, "ResourcesDiscovered", "All resources successfully discovered")
	wantCondition(t, ns, corev1.NamespaceDeletionGVParsingFailure, corev1.ConditionFalse, "ParsedGroupVersions", "All legacy kube types successfully parsed")
	wantCondition(t, ns, corev1.NamespaceDeletionContentFailure, corev1.ConditionFalse, "ContentDeleted", "All content successfully deleted, may be waiting on finalization")
	wantCondition(t, ns, corev1.NamespaceContentRemaining, corev1.ConditionTrue, "SomeResourcesRemain", "Some resources are remaining: configmaps. has 2 resource instances")
	wantCondition(t, ns, corev1.NamespaceFinalizersRemaining, corev1.ConditionTrue, "SomeFinalizersRemain",
		"Some content in the namespace has finalizers remaining: example.com/keep in 2 resource instances, example.com/other in 1 resource instances")
	before := ns.ResourceVersion
	if ns = f.sync(); ns.ResourceVersion != before {
		t.Errorf("an attempt that changed nothing wrote the namespace (%s -> %s)", before, ns.ResourceVersion)
	}

	for _, name := range []string{"a", "b"} {
		obj, err := f.core.ConfigMaps.Get(f.ctx, name, &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f.clearFinalizers(f.core.ConfigMaps, name, obj)
	}
	if ns := f.sync(); ns != nil {
		t.Fatalf("the namespace is still there: %+v", ns.Status)
	}
}

// TestConditionsWhilePodsRemain: while a pod is left, nothing else is
// deleted, and (as kube's controller does) only the failure conditions
// are reported, not the totals.
func TestConditionsWhilePodsRemain(t *testing.T) {
	t.Parallel()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Finalizers: []string{"example.com/keep"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	f := newFixture(t, pod, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}})
	ns := f.sync()
	if ns == nil {
		t.Fatal("the namespace went with a pod left")
	}
	if _, err := f.core.ConfigMaps.Get(f.ctx, "cm", &metav1.GetOptions{}); err != nil {
		t.Errorf("the config map went before the pod: %v", err)
	}
	wantCondition(t, ns, corev1.NamespaceContentRemaining, corev1.ConditionFalse, "ContentRemoved", "All content successfully removed")
	wantCondition(t, ns, corev1.NamespaceFinalizersRemaining, corev1.ConditionFalse, "ContentHasNoFinalizers", "All content-preserving finalizers finished")

	obj, err := f.core.Pods.Get(f.ctx, "p", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.clearFinalizers(f.core.Pods, "p", obj)
	if ns := f.sync(); ns != nil {
		t.Fatalf("the namespace is still there: %+v", ns.Status)
	}
}

// TestContentCondition: the content failure condition's message (kube's).
func TestContentCondition(t *testing.T) {
	c := &content{errs: []error{errorString("b failed"), errorString("a failed")}}
	got := c.conditions()[corev1.NamespaceDeletionContentFailure]
	if want := "Failed to delete all resource types, 2 remaining: a failed, b failed"; got.Message != want || got.Reason != "ContentDeletionFailed" || got.Status != corev1.ConditionTrue {
		t.Errorf("got %+v, want %q", got, want)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
