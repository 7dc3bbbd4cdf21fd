package handlers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// labellingAdmission is a mutating admission that labels what it admits
// with the operation, counting its calls.
type labellingAdmission struct{ calls int }

func (*labellingAdmission) Validate(context.Context, Attributes, runtime.Object) error { return nil }

func (l *labellingAdmission) Admit(_ context.Context, a Attributes, obj runtime.Object) error {
	l.calls++
	cm := obj.(*corev1.ConfigMap)
	cm.Labels = map[string]string{"admitted": string(a.Operation)}
	return nil
}

// validatingOnly admits without mutating.
type validatingOnly struct{}

func (validatingOnly) Validate(context.Context, Attributes, runtime.Object) error { return nil }

// plainCreater creates and updates config maps (it does not host mutation),
// returning what it is given.
type plainCreater struct{ created int }

func (*plainCreater) New() runtime.Object { return &corev1.ConfigMap{} }
func (*plainCreater) Destroy()            {}
func (p *plainCreater) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	p.created++
	return obj, nil
}

// hostingCreater runs the mutation it is given, as the generic Store does.
type hostingCreater struct {
	plainCreater
	mutated int
}

func (*hostingCreater) HostsMutation() bool { return true }
func (h *hostingCreater) CreateMutating(ctx context.Context, obj runtime.Object, mutate rest.MutateObjectFunc, _ rest.ValidateObjectFunc,
	_ *metav1.CreateOptions) (runtime.Object, error) {
	h.mutated++
	if mutate != nil {
		if err := mutate(ctx, obj, nil); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// TestMutateCreate: a storage that hosts mutation is given the request's
// mutating admission to run itself (once); any other storage's object is
// admitted in the handler before it sees it; with no mutating admission,
// none runs.
func TestMutateCreate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		hosting       bool
		mutating      bool
		wantGiven     bool
		wantAdmits    int
		wantMutating  int
		wantPlainSeen int
	}{
		{name: "hosting storage runs it", hosting: true, mutating: true, wantGiven: true, wantAdmits: 1, wantMutating: 1},
		{name: "other storage admitted in handler", mutating: true, wantAdmits: 1, wantPlainSeen: 1},
		{name: "no mutating admission", hosting: true, wantPlainSeen: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			plain, host := &plainCreater{}, &hostingCreater{}
			var creater interface {
				rest.Storage
				rest.Creater
			} = plain
			if tc.hosting {
				creater = host
			}
			adm := &labellingAdmission{}
			s := &Scope{Storage: creater, Admission: validatingOnly{}}
			if tc.mutating {
				s.Admission = adm
			}
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
			mutate, err := s.mutateCreate(ctx, creater, "ns", "a", obj, &metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if given := mutate != nil; given != tc.wantGiven {
				t.Errorf("mutation given to the storage: %v, want %v", given, tc.wantGiven)
			}
			out, err := create(ctx, creater, obj, mutate, nil, &metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if adm.calls != tc.wantAdmits {
				t.Errorf("admitted %d times, want %d", adm.calls, tc.wantAdmits)
			}
			if got := out.(*corev1.ConfigMap).Labels["admitted"]; tc.wantAdmits > 0 && got != string(Create) {
				t.Errorf("created object admitted as %q, want %q", got, Create)
			}
			if host.mutated != tc.wantMutating || plain.created+host.created != tc.wantPlainSeen {
				t.Errorf("CreateMutating called %d times, Create %d; want %d, %d",
					host.mutated, plain.created+host.created, tc.wantMutating, tc.wantPlainSeen)
			}
		})
	}
}

// TestMutateUpdate: for a storage that hosts mutation, the update's info
// carries the request's mutating admission (run by the storage, with the
// old object); for any other, the info admits the object it computes.
func TestMutateUpdate(t *testing.T) {
	t.Parallel()
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"}}
	newInfo := func() rest.UpdatedObjectInfo {
		return &rest.DefaultUpdatedObjectInfo{Obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
	}
	t.Run("hosting storage is given the mutation in the info", func(t *testing.T) {
		adm := &labellingAdmission{}
		s := &Scope{Storage: &hostingCreater{}, Admission: adm}
		info := s.mutateUpdate("ns", "a", newInfo(), &metav1.UpdateOptions{})
		obj, err := info.UpdatedObject(context.Background(), old)
		if err != nil {
			t.Fatal(err)
		}
		if adm.calls != 0 {
			t.Fatalf("admitted %d times computing the object, want 0", adm.calls)
		}
		mutate := rest.MutationOf(info)
		if mutate == nil {
			t.Fatal("no mutation in the info")
		}
		if err := mutate(context.Background(), obj, old); err != nil {
			t.Fatal(err)
		}
		if got := obj.(*corev1.ConfigMap).Labels["admitted"]; adm.calls != 1 || got != string(Update) {
			t.Errorf("admitted %d times as %q, want once as %q", adm.calls, got, Update)
		}
	})
	t.Run("other storage gets an admitted info", func(t *testing.T) {
		adm := &labellingAdmission{}
		s := &Scope{Storage: &plainCreater{}, Admission: adm}
		info := s.mutateUpdate("ns", "a", newInfo(), &metav1.UpdateOptions{})
		if rest.MutationOf(info) != nil {
			t.Error("mutation given to a storage that does not host it")
		}
		obj, err := info.UpdatedObject(context.Background(), old)
		if err != nil {
			t.Fatal(err)
		}
		if got := obj.(*corev1.ConfigMap).Labels["admitted"]; adm.calls != 1 || got != string(Update) {
			t.Errorf("admitted %d times as %q, want once as %q", adm.calls, got, Update)
		}
	})
	t.Run("no mutating admission", func(t *testing.T) {
		s := &Scope{Storage: &hostingCreater{}, Admission: validatingOnly{}}
		info := newInfo()
		if got := s.mutateUpdate("ns", "a", info, &metav1.UpdateOptions{}); got != info || rest.MutationOf(got) != nil {
			t.Error("info changed with no mutating admission")
		}
	})
}
