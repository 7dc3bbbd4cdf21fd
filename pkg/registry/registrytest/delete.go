package registrytest

import (
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var dryRunAll = []string{metav1.DryRunAll}

// deleteNow deletes name with a zero grace period, as a kubelet ends a
// pod, and checks that it took effect.
func (e *env) deleteNow(t *testing.T, name string) {
	t.Helper()
	if _, _, err := e.tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
	e.finish(t, name)
	e.wantNotFound(t, name, "after its deletion")
}

// release removes the suite's finalizer from name, which a deletion was
// waiting for.
func (e *env) release(t *testing.T, name string) runtime.Object {
	t.Helper()
	obj := e.get(t, name)
	m := accessor(t, obj)
	var keep []string
	for _, f := range m.GetFinalizers() {
		if f != testFinalizer {
			keep = append(keep, f)
		}
	}
	m.SetFinalizers(keep)
	out, _, err := e.update(obj, nil)
	if err != nil {
		t.Fatalf("removing the finalizer of %s: %v", name, err)
	}
	return out
}

func (tr *Tester) deleteCases() []testCase {
	return []testCase{
		{"not found", func(t *testing.T, e *env) {
			if _, _, err := tr.Storage.Delete(e.ctx(), e.name(), nil, &metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("delete of a missing object: %v, want NotFound", err)
			}
		}},
		{"valid", func(t *testing.T, e *env) {
			name := accessor(t, e.createValid(t, nil)).GetName()
			_, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err != nil {
				t.Fatalf("delete: %v", err)
			}
			if now == (tr.Finish != nil) {
				t.Errorf("delete: deleted at once %v, want %v", now, tr.Finish == nil)
			}
			e.wantDeleted(t, name, "after its deletion")
			e.finish(t, name)
			e.wantNotFound(t, name, "after its deletion")
			if _, _, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("second delete: %v, want NotFound", err)
			}
		}},
		{"preconditions", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			m := accessor(t, created)
			for _, pre := range []metav1.Preconditions{
				{UID: ptr.To(types.UID("registrytest-other-uid"))},
				{ResourceVersion: ptr.To("1")},
				{UID: ptr.To(m.GetUID()), ResourceVersion: ptr.To("1")},
			} {
				_, _, err := tr.Storage.Delete(e.ctx(), m.GetName(), nil, &metav1.DeleteOptions{Preconditions: &pre})
				if !apierrors.IsConflict(err) {
					t.Errorf("delete with a precondition failing (%v): %v, want Conflict", pre, err)
				}
			}
			e.wantUnchanged(t, created, "after deletes with failing preconditions")
			pre := metav1.Preconditions{UID: ptr.To(m.GetUID()), ResourceVersion: ptr.To(m.GetResourceVersion())}
			opts := &metav1.DeleteOptions{Preconditions: &pre, GracePeriodSeconds: ptr.To[int64](0)}
			if _, _, err := tr.Storage.Delete(e.ctx(), m.GetName(), nil, opts); err != nil {
				t.Fatalf("delete with preconditions met: %v", err)
			}
			e.wantDeleted(t, m.GetName(), "after a delete with its preconditions met")
		}},
		{"dry run", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			name := accessor(t, created).GetName()
			for _, opts := range []*metav1.DeleteOptions{
				{DryRun: dryRunAll},
				{DryRun: dryRunAll, GracePeriodSeconds: ptr.To[int64](0)},
				{DryRun: dryRunAll, PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)},
				{DryRun: dryRunAll, Preconditions: &metav1.Preconditions{UID: ptr.To(accessor(t, created).GetUID())}},
			} {
				if _, _, err := tr.Storage.Delete(e.ctx(), name, nil, opts); err != nil {
					t.Errorf("dry-run delete (%+v): %v", opts, err)
				}
				e.wantUnchanged(t, created, "after a dry-run delete")
			}
		}},
		{"graceful", tr.testGracefulDelete},
		{"finalizers", tr.testDeleteWithFinalizers},
	}
}

// testGracefulDelete: a delete marks the object for its grace period;
// what follows it changes nothing until the object goes.
func (tr *Tester) testGracefulDelete(t *testing.T, e *env) {
	if tr.GracePeriod == 0 {
		created := e.createValid(t, nil)
		name := accessor(t, created).GetName()
		_, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{})
		if err != nil || now == (tr.Finish != nil) {
			t.Fatalf("delete without grace period: deleted at once %v, %v", now, err)
		}
		e.wantDeleted(t, name, "after a delete of a resource without grace period")
		return
	}
	created := e.createValid(t, nil)
	name := accessor(t, created).GetName()
	out, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{DryRun: dryRunAll})
	if err != nil || now {
		t.Fatalf("dry-run graceful delete: deleted at once %v, %v", now, err)
	}
	if m, ok := out.(metav1.Object); ok && m.GetDeletionTimestamp() == nil {
		t.Error("dry-run graceful delete returned no deletionTimestamp")
	}
	e.wantUnchanged(t, created, "after a dry-run graceful delete")
	if _, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{}); err != nil || now {
		t.Fatalf("graceful delete: deleted at once %v, %v", now, err)
	}
	marked := e.get(t, name)
	m := accessor(t, marked)
	if m.GetDeletionTimestamp() == nil || m.GetDeletionGracePeriodSeconds() == nil || *m.GetDeletionGracePeriodSeconds() != tr.GracePeriod {
		t.Fatalf("after a graceful delete: deletionTimestamp %v, grace period %v; want set, %d",
			m.GetDeletionTimestamp(), m.GetDeletionGracePeriodSeconds(), tr.GracePeriod)
	}
	// A longer grace period changes nothing; a dry run of a
	// shorter one neither.
	if _, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To(tr.GracePeriod + 10)}); err != nil || now {
		t.Errorf("delete with a longer grace period: deleted at once %v, %v", now, err)
	}
	e.wantUnchanged(t, marked, "after a delete with a longer grace period")
	if _, _, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{DryRun: dryRunAll, GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Errorf("dry-run delete with no grace period: %v", err)
	}
	e.wantUnchanged(t, marked, "after a dry-run delete with no grace period")
	e.deleteNow(t, name)
}

// testDeleteWithFinalizers: an object with a finalizer is marked, not
// deleted, until its last finalizer goes.
func (tr *Tester) testDeleteWithFinalizers(t *testing.T, e *env) {
	base := e.name()
	obj := e.inNamespace(t, tr.Valid(base), nil)
	accessor(t, obj).SetFinalizers([]string{testFinalizer})
	created := e.create(t, obj)
	name := accessor(t, created).GetName()
	if _, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{DryRun: dryRunAll, GracePeriodSeconds: ptr.To[int64](0)}); err != nil || now {
		t.Errorf("dry-run delete of an object with finalizers: deleted at once %v, %v", now, err)
	}
	e.wantUnchanged(t, created, "after a dry-run delete")
	if _, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil || now {
		t.Fatalf("delete of an object with finalizers: deleted at once %v, %v", now, err)
	}
	marked := e.get(t, name)
	if m := accessor(t, marked); m.GetDeletionTimestamp() == nil {
		t.Fatal("an object held by a finalizer has no deletionTimestamp after its delete")
	}
	// Deleting again keeps it as it is marked (kube may record a
	// zero deletionGracePeriodSeconds where there was none).
	if _, now, err := tr.Storage.Delete(e.ctx(), name, nil, &metav1.DeleteOptions{}); err != nil || now {
		t.Errorf("second delete of an object held by a finalizer: deleted at once %v, %v", now, err)
	}
	again := e.get(t, name)
	if m, am := accessor(t, marked), accessor(t, again); !am.GetDeletionTimestamp().Equal(m.GetDeletionTimestamp()) ||
		!slices.Equal(am.GetFinalizers(), m.GetFinalizers()) {
		t.Errorf("after a second delete: deletionTimestamp %v finalizers %q, want %v %q",
			am.GetDeletionTimestamp(), am.GetFinalizers(), m.GetDeletionTimestamp(), m.GetFinalizers())
	}
	marked = again
	// Nothing new may be created under its name meanwhile.
	if _, err := tr.Storage.Create(e.ctx(), e.inNamespace(t, tr.Valid(base), nil), nil, &metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create over an object being deleted: %v, want AlreadyExists", err)
	}
	// A dry run of the update that removes the finalizer keeps it.
	dry := marked.DeepCopyObject()
	accessor(t, dry).SetFinalizers(nil)
	if _, _, err := e.update(dry, &metav1.UpdateOptions{DryRun: dryRunAll}); err != nil {
		t.Errorf("dry-run removal of the finalizer: %v", err)
	}
	e.wantUnchanged(t, marked, "after a dry-run removal of its finalizer")
	e.release(t, name)
	e.finish(t, name)
	e.wantNotFound(t, name, "after its last finalizer went")
}

func (tr *Tester) deleteCollectionCases() []testCase {
	collection := func(t *testing.T) rest.CollectionDeleter {
		t.Helper()
		d, ok := tr.Storage.(rest.CollectionDeleter)
		if !ok {
			t.Skip("the storage has no deletecollection")
		}
		return d
	}
	return []testCase{
		{"selectors", func(t *testing.T, e *env) {
			d := collection(t)
			one1, one2, two, elsewhere, mine := e.listFixture(t)
			ctx := e.ctx()
			now := &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
			if _, err := d.DeleteCollection(ctx, nil, &metav1.DeleteOptions{DryRun: dryRunAll}, listOptions(t, mine, "")); err != nil {
				t.Fatalf("dry-run deletecollection: %v", err)
			}
			for _, obj := range []runtime.Object{one1, one2, two} {
				e.wantUnchanged(t, obj, "after a dry-run deletecollection")
			}
			out, err := d.DeleteCollection(ctx, nil, now, listOptions(t, mine+",a=1", ""))
			if err != nil {
				t.Fatalf("deletecollection a=1: %v", err)
			}
			if got := e.listNames(t, out); !equalNames(got, names(t, one1, one2)) {
				t.Errorf("deletecollection a=1 returned %q, want %q", got, names(t, one1, one2))
			}
			e.wantDeleted(t, accessor(t, one1).GetName(), "after deletecollection a=1")
			e.wantDeleted(t, accessor(t, one2).GetName(), "after deletecollection a=1")
			e.wantUnchanged(t, two, "after deletecollection a=1")
			if elsewhere != nil {
				all := e.ctxIn("")
				if got := e.list(t, all, mine, "metadata.name="+accessor(t, elsewhere).GetName()); len(got) != 1 {
					t.Errorf("deletecollection in a namespace deleted in another: %q left", got)
				}
			}
			if _, err := d.DeleteCollection(ctx, nil, now, listOptions(t, "", "metadata.name="+accessor(t, two).GetName())); err != nil {
				t.Fatalf("deletecollection by name: %v", err)
			}
			e.wantDeleted(t, accessor(t, two).GetName(), "after deletecollection by its name")
		}},
		{"all", func(t *testing.T, e *env) {
			d := collection(t)
			one1, one2, two, elsewhere, _ := e.listFixture(t)
			ctx := e.ctx()
			if _, err := d.DeleteCollection(ctx, nil, &metav1.DeleteOptions{DryRun: dryRunAll}, nil); err != nil {
				t.Fatalf("dry-run deletecollection: %v", err)
			}
			for _, obj := range []runtime.Object{one1, one2, two} {
				e.wantUnchanged(t, obj, "after a dry-run deletecollection of all")
			}
			if _, err := d.DeleteCollection(ctx, nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, nil); err != nil {
				t.Fatalf("deletecollection: %v", err)
			}
			for _, obj := range []runtime.Object{one1, one2, two} {
				e.wantDeleted(t, accessor(t, obj).GetName(), "after deletecollection of all")
			}
			if elsewhere != nil {
				if got := e.list(t, e.ctxIn(""), "", "metadata.name="+accessor(t, elsewhere).GetName()); len(got) != 1 {
					t.Errorf("deletecollection in a namespace deleted in another: %q left", got)
				}
			}
		}},
	}
}
