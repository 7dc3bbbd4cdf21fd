package registrytest

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (tr *Tester) createCases() []testCase {
	return []testCase{
		{"valid", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			m := accessor(t, created)
			if m.GetUID() == "" || m.GetResourceVersion() == "" || m.GetCreationTimestamp().Time.IsZero() {
				t.Errorf("created object lacks system fields: uid %q resourceVersion %q creationTimestamp %v",
					m.GetUID(), m.GetResourceVersion(), m.GetCreationTimestamp())
			}
			if m.GetNamespace() != e.ns {
				t.Errorf("created in namespace %q, want %q", m.GetNamespace(), e.ns)
			}
			if got := e.get(t, m.GetName()); !same(t, got, created) {
				t.Errorf("get after create:\n got %#v\nwant %s", encode(t, got), encode(t, created))
			}
		}},
		{"already exists", func(t *testing.T, e *env) {
			base := e.name()
			created := e.create(t, e.inNamespace(t, tr.Valid(base), nil))
			again := e.inNamespace(t, tr.Valid(base), nil)
			if _, err := tr.Storage.Create(e.ctx(), again, nil, &metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
				t.Errorf("second create: %v, want AlreadyExists", err)
			}
			e.wantUnchanged(t, created, "after a second create")
		}},
		{"invalid", func(t *testing.T, e *env) {
			if tr.Invalid == nil {
				t.Skip("no Invalid object")
			}
			name := e.name()
			obj := e.inNamespace(t, tr.Invalid(name), nil)
			if _, err := tr.Storage.Create(e.ctx(), obj, nil, &metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
				t.Errorf("create of the invalid object: %v, want Invalid", err)
			}
			e.wantNotFound(t, accessor(t, obj).GetName(), "after a refused create")
		}},
		{"generate name", func(t *testing.T, e *env) {
			if tr.NoGenerateName {
				t.Skip("names of this kind cannot be generated")
			}
			obj := e.valid(t, nil)
			m := accessor(t, obj)
			m.SetName("")
			m.SetGenerateName(e.prefix + "-gen-")
			created := e.create(t, obj)
			name := accessor(t, created).GetName()
			if !strings.HasPrefix(name, e.prefix+"-gen-") || len(name) == len(e.prefix+"-gen-") {
				t.Errorf("generated name %q, want %q and a suffix", name, e.prefix+"-gen-")
			}
			e.get(t, name)
		}},
		{"no name", func(t *testing.T, e *env) {
			obj := e.valid(t, nil)
			accessor(t, obj).SetName("")
			if _, err := tr.Storage.Create(e.ctx(), obj, nil, &metav1.CreateOptions{}); err == nil {
				t.Error("created an object with neither name nor generateName")
			}
		}},
		{"dry run", tr.testDryRunCreate},
	}
}

// testDryRunCreate: a dry-run create stores nothing, and fails where the
// create would.
func (tr *Tester) testDryRunCreate(t *testing.T, e *env) {
	base := e.name()
	obj := e.inNamespace(t, tr.Valid(base), nil)
	name := accessor(t, obj).GetName()
	out, err := tr.Storage.Create(e.ctx(), obj, nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if accessor(t, out).GetName() != name {
		t.Errorf("dry-run create returned %q, want %q", accessor(t, out).GetName(), name)
	}
	e.wantNotFound(t, name, "after a dry-run create")
	if got := e.list(t, e.ctx(), "", "metadata.name="+name); len(got) != 0 {
		t.Errorf("list after a dry-run create: %q, want none", got)
	}
	// A dry run of an existing name fails as the create would.
	created := e.create(t, e.inNamespace(t, tr.Valid(base), nil))
	_, err = tr.Storage.Create(e.ctx(), e.inNamespace(t, tr.Valid(base), nil), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("dry-run create of an existing name: %v, want AlreadyExists", err)
	}
	e.wantUnchanged(t, created, "after a dry-run create of its name")
}

func (tr *Tester) getCases() []testCase {
	return []testCase{
		{"not found", func(t *testing.T, e *env) {
			e.wantNotFound(t, e.name(), "never created")
		}},
		{"found", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			got := e.get(t, accessor(t, created).GetName())
			if accessor(t, got).GetUID() != accessor(t, created).GetUID() {
				t.Errorf("get returned uid %q, want %q", accessor(t, got).GetUID(), accessor(t, created).GetUID())
			}
		}},
	}
}
