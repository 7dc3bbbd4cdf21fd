package registrytest

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func (tr *Tester) updateCases() []testCase {
	cases := []testCase{
		{"valid", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			changed := e.change(t, created)
			out, isNew, err := e.update(changed, nil)
			if err != nil || isNew {
				t.Fatalf("update: created %v, %v", isNew, err)
			}
			if accessor(t, out).GetResourceVersion() == accessor(t, created).GetResourceVersion() {
				t.Error("update kept the resourceVersion")
			}
			if same(t, withoutVersion(t, out), withoutVersion(t, created)) {
				t.Error("update changed nothing")
			}
			if got := e.get(t, accessor(t, out).GetName()); !same(t, got, out) {
				t.Errorf("get after update:\n got %#v\nwant %s", encode(t, got), encode(t, out))
			}
		}},
		{"stale resourceVersion", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			updated, _, err := e.update(e.change(t, created), nil)
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if _, _, err := e.update(e.change(t, created), nil); !apierrors.IsConflict(err) {
				t.Errorf("update from a stale resourceVersion: %v, want Conflict", err)
			}
			e.wantUnchanged(t, updated, "after a conflicting update")
		}},
		{"uid precondition", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			changed := e.change(t, created)
			accessor(t, changed).SetUID(types.UID("registrytest-other-uid"))
			if _, _, err := e.update(changed, nil); !apierrors.IsConflict(err) {
				t.Errorf("update of another uid: %v, want Conflict", err)
			}
			e.wantUnchanged(t, created, "after an update of another uid")
		}},
		{"dry run", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			out, _, err := e.update(e.change(t, created), &metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatalf("dry-run update: %v", err)
			}
			if same(t, withoutVersion(t, out), withoutVersion(t, created)) {
				t.Error("dry-run update returned the object unchanged")
			}
			e.wantUnchanged(t, created, "after a dry-run update")
		}},
		{"unconditional", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			changed := e.change(t, created)
			accessor(t, changed).SetResourceVersion("")
			_, _, err := e.update(changed, nil)
			switch {
			case tr.AllowUnconditionalUpdate && err != nil:
				t.Errorf("update without resourceVersion: %v, want it to apply", err)
			case !tr.AllowUnconditionalUpdate && !apierrors.IsInvalid(err):
				t.Errorf("update without resourceVersion: %v, want Invalid", err)
			}
			if !tr.AllowUnconditionalUpdate {
				e.wantUnchanged(t, created, "after a refused update")
			}
		}},
	}
	cases = append(cases, tr.updateMissingCases()...)
	return append(cases, testCase{"invalid", tr.testInvalidUpdate})
}

// updateMissingCases update an object that does not exist: a create
// where the resource allows it, else NotFound.
func (tr *Tester) updateMissingCases() []testCase {
	return []testCase{
		{"create on update", func(t *testing.T, e *env) {
			obj := e.valid(t, nil)
			name := accessor(t, obj).GetName()
			_, created, err := e.update(obj, nil)
			if !tr.AllowCreateOnUpdate {
				if !apierrors.IsNotFound(err) {
					t.Errorf("update of a missing object: %v, want NotFound", err)
				}
				e.wantNotFound(t, name, "after an update of it")
				return
			}
			if err != nil || !created {
				t.Fatalf("update of a missing object: created %v, %v; want created", created, err)
			}
			e.get(t, name)
		}},
		{"dry run create on update", func(t *testing.T, e *env) {
			if !tr.AllowCreateOnUpdate {
				t.Skip("the resource does not create on update")
			}
			obj := e.valid(t, nil)
			name := accessor(t, obj).GetName()
			if _, _, err := e.update(obj, &metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("dry-run update of a missing object: %v", err)
			}
			e.wantNotFound(t, name, "after a dry-run create on update")
		}},
		{"not found", func(t *testing.T, e *env) {
			if tr.AllowCreateOnUpdate {
				t.Skip("the resource creates on update")
			}
			obj := e.valid(t, nil)
			accessor(t, obj).SetResourceVersion("1")
			if _, _, err := e.update(obj, nil); !apierrors.IsNotFound(err) {
				t.Errorf("update of a missing object: %v, want NotFound", err)
			}
		}},
	}
}

// testInvalidUpdate: an update to an invalid object is refused and
// changes nothing.
func (tr *Tester) testInvalidUpdate(t *testing.T, e *env) {
	if tr.Invalid == nil {
		t.Skip("no Invalid object")
	}
	created := e.createValid(t, nil)
	m := accessor(t, created)
	invalid := e.inNamespace(t, tr.Invalid(m.GetName()), nil)
	im := accessor(t, invalid)
	if im.GetName() != m.GetName() {
		t.Skip("the Invalid object is invalid by its name")
	}
	im.SetResourceVersion(m.GetResourceVersion())
	im.SetUID(m.GetUID())
	im.SetCreationTimestamp(m.GetCreationTimestamp())
	if _, _, err := e.update(invalid, nil); !apierrors.IsInvalid(err) {
		t.Errorf("update to the invalid object: %v, want Invalid", err)
	}
	e.wantUnchanged(t, created, "after a refused update")
}
