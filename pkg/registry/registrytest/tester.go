package registrytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ResourceStorage is what Tester drives: a resource's main storage. A
// rest.CollectionDeleter is checked when the storage is one.
type ResourceStorage interface {
	rest.Storage
	rest.Scoper
	rest.Creater
	rest.Getter
	rest.Lister
	rest.Updater
	rest.GracefulDeleter
}

// Tester checks the common contract of one resource's storage. Its
// fields state what the resource is expected to do (its strategy's
// answers); a case whose outcome differs fails. Run it on a storage of
// the test's own (BuildGroup): the cases create, change and delete
// objects, in namespaces (or under names) of their own.
type Tester struct {
	Storage ResourceStorage
	// Valid returns a new valid object named name (a DNS label), in no
	// namespace: the suite sets the namespace and adds labels. A kind
	// whose name follows from its spec (CRDs) names it from name.
	Valid func(name string) runtime.Object
	// Invalid returns an object named name that fails validation.
	Invalid func(name string) runtime.Object
	// Change, when set, changes a valid stored object into another valid
	// one, for the update cases (nil: they change a label).
	Change func(obj runtime.Object)

	// AllowCreateOnUpdate: a PUT of a missing object creates it.
	AllowCreateOnUpdate bool
	// AllowUnconditionalUpdate: a PUT without resourceVersion applies.
	AllowUnconditionalUpdate bool
	// GracePeriod is the grace period a delete without one gives Valid
	// objects (0: they are deleted at once).
	GracePeriod int64
	// Finish, when set, says that the resource finishes every deletion
	// itself (namespaces, CRDs): a delete only marks the object
	// (deletionTimestamp), and Finish does what its controller would to
	// remove it, once no finalizer of the suite's is left.
	Finish func(ctx context.Context, name string) error
	// Context, when set, adds to each request's context what the
	// resource needs (a user allowed to write it).
	Context func(ctx context.Context) context.Context
	// NoGenerateName: the kind's names cannot be generated (CRDs).
	NoGenerateName bool

	// Status, when set, checks the status subresource.
	Status *StatusCheck
	// Scale, when set, checks the scale subresource.
	Scale *ScaleCheck

	// Skip names cases not to run, with the reason (a known defect,
	// named): "delete/dry-run" skips one case, "delete" a group.
	Skip map[string]string
}

// testFinalizer is the finalizer the suite's objects are held with.
const testFinalizer = "registrytest.example.com/hold"

// Run runs every case, each a subtest of t.
func (tr *Tester) Run(t *testing.T) {
	t.Helper()
	groups := []struct {
		name  string
		cases []testCase
	}{
		{"create", tr.createCases()},
		{"get", tr.getCases()},
		{"list", tr.listCases()},
		{"update", tr.updateCases()},
		{"delete", tr.deleteCases()},
		{"deletecollection", tr.deleteCollectionCases()},
		{"scope", tr.scopeCases()},
		{"status", tr.statusCases()},
		{"scale", tr.scaleCases()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			if reason, ok := tr.Skip[g.name]; ok {
				t.Skip(reason)
			}
			for _, tc := range g.cases {
				t.Run(tc.name, func(t *testing.T) {
					if reason, ok := tr.Skip[g.name+"/"+tc.name]; ok {
						t.Skip(reason)
					}
					tc.run(t, tr.newEnv(t, g.name+"-"+tc.name))
				})
			}
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, e *env)
}

// env is one case's place: its namespace (namespaced resources) and the
// prefix of its objects' names.
type env struct {
	tr     *Tester
	ns     string // "" for cluster-scoped resources
	prefix string
	seq    int
}

func (tr *Tester) newEnv(t *testing.T, caseName string) *env {
	e := &env{tr: tr, prefix: dnsLabel(caseName)}
	if tr.Storage.NamespaceScoped() {
		e.ns = e.prefix
	}
	return e
}

// dnsLabel makes s a DNS label short enough to take a suffix.
func dnsLabel(s string) string {
	out := make([]byte, 0, len(s))
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			out = append(out, c)
		case c >= 'A' && c <= 'Z':
			out = append(out, c+'a'-'A')
		default:
			if len(out) > 0 && out[len(out)-1] != '-' {
				out = append(out, '-')
			}
		}
	}
	if len(out) > 40 {
		out = out[:40]
	}
	for len(out) > 0 && out[len(out)-1] == '-' {
		out = out[:len(out)-1]
	}
	return "rt-" + string(out)
}

// ctx is the request context of the case's namespace.
func (e *env) ctx() context.Context { return e.ctxIn(e.ns) }

func (e *env) ctxIn(ns string) context.Context {
	ctx := request.WithNamespace(context.Background(), ns)
	if e.tr.Context != nil {
		ctx = e.tr.Context(ctx)
	}
	return ctx
}

// name returns a new name of the case's.
func (e *env) name() string {
	e.seq++
	return fmt.Sprintf("%s-%d", e.prefix, e.seq)
}

// valid returns a valid object with a new name, in the case's namespace,
// with labels added.
func (e *env) valid(t *testing.T, labels map[string]string) runtime.Object {
	t.Helper()
	return e.inNamespace(t, e.tr.Valid(e.name()), labels)
}

func (e *env) inNamespace(t *testing.T, obj runtime.Object, labels map[string]string) runtime.Object {
	t.Helper()
	m := accessor(t, obj)
	m.SetNamespace(e.ns)
	if len(labels) > 0 {
		all := m.GetLabels()
		if all == nil {
			all = map[string]string{}
		}
		for k, v := range labels {
			all[k] = v
		}
		m.SetLabels(all)
	}
	return obj
}

// create creates obj in ns, failing t on error.
func (e *env) createIn(t *testing.T, ns string, obj runtime.Object) runtime.Object {
	t.Helper()
	out, err := e.tr.Storage.Create(e.ctxIn(ns), obj, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", accessor(t, obj).GetName(), err)
	}
	return out
}

func (e *env) create(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	return e.createIn(t, e.ns, obj)
}

// createValid creates a valid object with labels and returns it as stored.
func (e *env) createValid(t *testing.T, labels map[string]string) runtime.Object {
	t.Helper()
	return e.create(t, e.valid(t, labels))
}

// get reads name, failing t on error.
func (e *env) get(t *testing.T, name string) runtime.Object {
	t.Helper()
	obj, err := e.tr.Storage.Get(e.ctx(), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return obj
}

// wantNotFound checks that name is not stored.
func (e *env) wantNotFound(t *testing.T, name, after string) {
	t.Helper()
	if _, err := e.tr.Storage.Get(e.ctx(), name, &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get %s %s: %v, want NotFound", name, after, err)
	}
}

// wantUnchanged checks that the stored object is still before.
func (e *env) wantUnchanged(t *testing.T, before runtime.Object, after string) {
	t.Helper()
	name := accessor(t, before).GetName()
	got, err := e.tr.Storage.Get(e.ctx(), name, &metav1.GetOptions{})
	if err != nil {
		t.Errorf("get %s %s: %v, want it unchanged", name, after, err)
		return
	}
	if !same(t, got, before) {
		t.Errorf("%s %s changed:\n got %s\nwant %s", name, after, encode(t, got), encode(t, before))
	}
}

// wantDeleted checks that a delete of name took effect: the object is
// gone, or, for a resource that finishes its deletions (Finish), marked.
func (e *env) wantDeleted(t *testing.T, name, after string) {
	t.Helper()
	if e.tr.Finish == nil {
		e.wantNotFound(t, name, after)
		return
	}
	obj, err := e.tr.Storage.Get(e.ctx(), name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("get %s %s: %v", name, after, err)
		return
	}
	if accessor(t, obj).GetDeletionTimestamp() == nil {
		t.Errorf("%s %s: neither gone nor marked deleted", name, after)
	}
}

// finish ends the deletion of name when the resource finishes its own.
func (e *env) finish(t *testing.T, name string) {
	t.Helper()
	if e.tr.Finish == nil {
		return
	}
	if err := e.tr.Finish(e.ctx(), name); err != nil {
		t.Fatalf("finishing the deletion of %s: %v", name, err)
	}
}

// update PUTs obj.
func (e *env) update(obj runtime.Object, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return updateWith(e.ctx(), e.tr.Storage, obj, opts)
}

func updateWith(ctx context.Context, u rest.Updater, obj runtime.Object, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if opts == nil {
		opts = &metav1.UpdateOptions{}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, err
	}
	return u.Update(ctx, m.GetName(), &rest.DefaultUpdatedObjectInfo{Obj: obj}, nil, nil, false, opts)
}

// change applies the Tester's change to a copy of obj.
func (e *env) change(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	obj = obj.DeepCopyObject()
	if e.tr.Change != nil {
		e.tr.Change(obj)
		return obj
	}
	m := accessor(t, obj)
	labels := m.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["registrytest-changed"] = fmt.Sprint(len(labels))
	m.SetLabels(labels)
	return obj
}

func accessor(t testing.TB, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatalf("registrytest: %T has no metadata: %v", obj, err)
	}
	return m
}

// withoutVersion is a copy of obj without what every write changes
// (resourceVersion, generation, managed fields), to compare contents.
func withoutVersion(t testing.TB, obj runtime.Object) runtime.Object {
	t.Helper()
	obj = obj.DeepCopyObject()
	m := accessor(t, obj)
	m.SetResourceVersion("")
	m.SetGeneration(0)
	m.SetManagedFields(nil)
	return obj
}

// encode is obj as a client reads it (JSON: times in seconds).
func encode(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encoding %T: %v", obj, err)
	}
	return data
}

// sameJSON reports that a and b (parts of objects) encode the same.
func sameJSON(t testing.TB, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatalf("encoding %T: %v", a, err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatalf("encoding %T: %v", b, err)
	}
	return bytes.Equal(ja, jb)
}

// same reports that a and b read the same to a client.
func same(t testing.TB, a, b runtime.Object) bool {
	t.Helper()
	return bytes.Equal(encode(t, a), encode(t, b))
}

// RemoveFinalizers is a Finish for resources whose strategy adds a
// finalizer of the garbage collector's (jobs, replication controllers
// under orphan or foreground deletion): it removes every finalizer, as the
// collector does once it has dealt with the object's dependents.
func RemoveFinalizers(s rest.Storage) func(ctx context.Context, name string) error {
	return func(ctx context.Context, name string) error {
		obj, err := s.(rest.Getter).Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		m.SetFinalizers(nil)
		_, _, err = s.(rest.Updater).Update(ctx, name, &rest.DefaultUpdatedObjectInfo{Obj: obj}, nil, nil, false, &metav1.UpdateOptions{})
		return err
	}
}
