package registrytest

import (
	"context"
	"reflect"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// StatusCheck describes a resource's status subresource.
type StatusCheck struct {
	// Storage is the subresource ("<resource>/status").
	Storage rest.Updater
	// ChangeSpec and ChangeStatus change an object's spec and status
	// into other valid values, the same each time they are called.
	// ChangeSpec may be nil: the spec changes through no update
	// (namespaces').
	ChangeSpec, ChangeStatus func(obj runtime.Object)
	// Spec and Status return an object's spec and status, to compare
	// (nil: its Spec and Status fields, which kube's kinds have).
	Spec, Status func(obj runtime.Object) any
}

func (s *StatusCheck) spec(obj runtime.Object) any {
	if s.Spec != nil {
		return s.Spec(obj)
	}
	return topField(obj, "Spec")
}

func (s *StatusCheck) status(obj runtime.Object) any {
	if s.Status != nil {
		return s.Status(obj)
	}
	return topField(obj, "Status")
}

// topField is the named field of the struct obj points to.
func topField(obj runtime.Object, name string) any {
	return reflect.ValueOf(obj).Elem().FieldByName(name).Interface()
}

// ScaleCheck describes a resource's scale subresource.
type ScaleCheck struct {
	// Storage is the subresource ("<resource>/scale"), serving
	// autoscaling/v1 Scale.
	Storage interface {
		rest.Getter
		rest.Updater
	}
	// Replicas returns an object's desired replicas.
	Replicas func(obj runtime.Object) int32
}

func (tr *Tester) scopeCases() []testCase {
	if !tr.Storage.NamespaceScoped() {
		return []testCase{
			{"namespace ignored", func(t *testing.T, e *env) {
				obj := e.valid(t, nil)
				accessor(t, obj).SetNamespace("registrytest-ns")
				created := e.createIn(t, "registrytest-ns", obj)
				if ns := accessor(t, created).GetNamespace(); ns != "" {
					t.Errorf("a cluster-scoped object was created in namespace %q", ns)
				}
				name := accessor(t, created).GetName()
				if _, err := tr.Storage.Get(e.ctxIn(""), name, &metav1.GetOptions{}); err != nil {
					t.Errorf("get without a namespace: %v", err)
				}
				if _, err := tr.Storage.Get(e.ctxIn("registrytest-other"), name, &metav1.GetOptions{}); err != nil {
					t.Errorf("get from any namespace: %v", err)
				}
			}},
		}
	}
	return []testCase{
		{"other namespace", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			name := accessor(t, created).GetName()
			other := e.ctxIn(e.ns + "-other")
			if _, err := tr.Storage.Get(other, name, &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get from another namespace: %v, want NotFound", err)
			}
			moved := created.DeepCopyObject()
			accessor(t, moved).SetNamespace(e.ns + "-other")
			if _, _, err := updateWith(other, tr.Storage, moved, nil); err == nil {
				t.Error("update from another namespace: no error")
			}
			if _, _, err := tr.Storage.Delete(other, name, nil, &metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("delete from another namespace: %v, want NotFound", err)
			}
			e.wantUnchanged(t, created, "after writes from another namespace")
		}},
		{"namespace mismatch", func(t *testing.T, e *env) {
			obj := e.valid(t, nil)
			accessor(t, obj).SetNamespace(e.ns + "-other")
			if _, err := tr.Storage.Create(e.ctx(), obj, nil, &metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
				t.Errorf("create of an object of another namespace: %v, want BadRequest", err)
			}
		}},
		{"no namespace", func(t *testing.T, e *env) {
			obj := e.valid(t, nil)
			accessor(t, obj).SetNamespace("")
			// kube's validation refuses it (metadata.namespace: Required).
			if _, err := tr.Storage.Create(e.ctxIn(""), obj, nil, &metav1.CreateOptions{}); !apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err) {
				t.Errorf("create without a namespace: %v, want BadRequest or Invalid", err)
			}
			if _, err := tr.Storage.Get(e.ctxIn(""), accessor(t, obj).GetName(), &metav1.GetOptions{}); !apierrors.IsBadRequest(err) {
				t.Errorf("get without a namespace: %v, want BadRequest", err)
			}
		}},
		{"namespace defaulted", func(t *testing.T, e *env) {
			obj := e.valid(t, nil)
			accessor(t, obj).SetNamespace("")
			created := e.create(t, obj)
			if ns := accessor(t, created).GetNamespace(); ns != e.ns {
				t.Errorf("created in namespace %q, want the request's %q", ns, e.ns)
			}
		}},
	}
}

func (s *StatusCheck) changeSpec(obj runtime.Object) {
	if s.ChangeSpec != nil {
		s.ChangeSpec(obj)
	}
}

func (tr *Tester) statusCases() []testCase {
	s := tr.Status
	if s == nil {
		return nil
	}
	return []testCase{
		{"keeps spec", tr.testStatusKeepsSpec},
		{"spec keeps status", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			sent := created.DeepCopyObject()
			s.changeSpec(sent)
			s.ChangeStatus(sent)
			out, _, err := e.update(sent, nil)
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			got := e.get(t, accessor(t, created).GetName())
			for what, obj := range map[string]runtime.Object{"returned": out, "stored": got} {
				if !sameJSON(t, s.spec(obj), s.spec(sent)) {
					t.Errorf("%s spec after an update:\n got %#v\nwant %#v", what, s.spec(obj), s.spec(sent))
				}
				if !sameJSON(t, s.status(obj), s.status(created)) {
					t.Errorf("%s status after an update:\n got %#v\nwant %#v", what, s.status(obj), s.status(created))
				}
			}
		}},
		{"stale resourceVersion", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			sent := created.DeepCopyObject()
			s.ChangeStatus(sent)
			updated, _, err := updateWith(e.ctx(), s.Storage, sent, nil)
			if err != nil {
				t.Fatalf("status update: %v", err)
			}
			if _, _, err := updateWith(e.ctx(), s.Storage, sent, nil); !apierrors.IsConflict(err) {
				t.Errorf("status update from a stale resourceVersion: %v, want Conflict", err)
			}
			e.wantUnchanged(t, updated, "after a conflicting status update")
		}},
		{"not found", func(t *testing.T, e *env) {
			if tr.AllowCreateOnUpdate {
				t.Skip("the resource creates on update")
			}
			obj := e.valid(t, nil)
			s.ChangeStatus(obj)
			accessor(t, obj).SetResourceVersion("1")
			if _, _, err := updateWith(e.ctx(), s.Storage, obj, nil); !apierrors.IsNotFound(err) {
				t.Errorf("status update of a missing object: %v, want NotFound", err)
			}
		}},
	}
}

// testStatusKeepsSpec: a status update changes the status alone, and a
// dry run of it nothing.
func (tr *Tester) testStatusKeepsSpec(t *testing.T, e *env) {
	s := tr.Status
	created := e.createValid(t, nil)
	sent := created.DeepCopyObject()
	s.changeSpec(sent)
	s.ChangeStatus(sent)
	if s.ChangeSpec != nil && sameJSON(t, s.spec(sent), s.spec(created)) {
		t.Fatal("ChangeSpec changed nothing")
	}
	if sameJSON(t, s.status(sent), s.status(created)) {
		t.Fatal("ChangeStatus changed nothing")
	}
	out, _, err := updateWith(e.ctx(), s.Storage, sent, nil)
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	got := e.get(t, accessor(t, created).GetName())
	for what, obj := range map[string]runtime.Object{"returned": out, "stored": got} {
		if !sameJSON(t, s.spec(obj), s.spec(created)) {
			t.Errorf("%s spec after a status update:\n got %#v\nwant %#v", what, s.spec(obj), s.spec(created))
		}
		if !sameJSON(t, s.status(obj), s.status(sent)) {
			t.Errorf("%s status after a status update:\n got %#v\nwant %#v", what, s.status(obj), s.status(sent))
		}
	}
	dry := got.DeepCopyObject()
	s.changeSpec(dry)
	if _, _, err := updateWith(e.ctx(), s.Storage, dry, &metav1.UpdateOptions{DryRun: dryRunAll}); err != nil {
		t.Errorf("dry-run status update: %v", err)
	}
	e.wantUnchanged(t, got, "after a dry-run status update")
}

func (tr *Tester) scaleCases() []testCase {
	s := tr.Scale
	if s == nil {
		return nil
	}
	getScale := func(t *testing.T, ctx context.Context, name string) *autoscalingv1.Scale {
		t.Helper()
		obj, err := s.Storage.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		return obj.(*autoscalingv1.Scale)
	}
	return []testCase{
		{"get and update", func(t *testing.T, e *env) {
			created := e.createValid(t, nil)
			name := accessor(t, created).GetName()
			scale := getScale(t, e.ctx(), name)
			if scale.Spec.Replicas != s.Replicas(created) || scale.Name != name || scale.ResourceVersion != accessor(t, created).GetResourceVersion() {
				t.Errorf("scale %s rv %s replicas %d, want %s rv %s replicas %d", scale.Name, scale.ResourceVersion, scale.Spec.Replicas,
					name, accessor(t, created).GetResourceVersion(), s.Replicas(created))
			}
			want := scale.Spec.Replicas + 2
			dry := scale.DeepCopy()
			dry.Spec.Replicas = want + 5
			if _, _, err := updateWith(e.ctx(), s.Storage, dry, &metav1.UpdateOptions{DryRun: dryRunAll}); err != nil {
				t.Errorf("dry-run scale: %v", err)
			}
			e.wantUnchanged(t, created, "after a dry-run scale")
			scale.Spec.Replicas = want
			if _, _, err := updateWith(e.ctx(), s.Storage, scale, nil); err != nil {
				t.Fatalf("scale: %v", err)
			}
			if got := s.Replicas(e.get(t, name)); got != want {
				t.Errorf("replicas after scaling to %d: %d", want, got)
			}
			if _, _, err := updateWith(e.ctx(), s.Storage, scale, nil); !apierrors.IsConflict(err) {
				t.Errorf("scale from a stale resourceVersion: %v, want Conflict", err)
			}
		}},
		{"not found", func(t *testing.T, e *env) {
			if _, err := s.Storage.Get(e.ctx(), e.name(), &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get scale of a missing object: %v, want NotFound", err)
			}
		}},
	}
}
