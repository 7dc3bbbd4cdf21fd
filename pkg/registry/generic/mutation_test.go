package generic_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// steps records the order in which the Store runs the parts of a write.
type steps struct {
	mu  sync.Mutex
	got []string
}

func (s *steps) add(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, step)
}

func (s *steps) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got
	s.got = nil
	return got
}

// recordingStrategy records its steps, naming the object it sees.
type recordingStrategy struct {
	generic.BaseStrategy
	log *steps
}

func (r recordingStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	r.log.add("prepare " + obj.(*corev1.ConfigMap).Name)
}

func (r recordingStrategy) Validate(context.Context, runtime.Object) field.ErrorList {
	r.log.add("validate")
	return nil
}

func (r recordingStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {
	r.log.add("prepareUpdate")
}

func (r recordingStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	r.log.add("validateUpdate")
	return nil
}

// mutationStore builds config maps whose Begin hooks and strategy record
// into the returned steps.
func mutationStore(t *testing.T) (registrytest.ResourceStorage, *steps) {
	log := &steps{}
	r := configMapResource(recordingStrategy{generic.BaseStrategy{Namespaced: true}, log})
	r.Hooks = generic.Hooks{
		BeginCreate: func(context.Context, runtime.Object, *metav1.CreateOptions) (generic.FinishFunc, error) {
			log.add("beginCreate")
			return func(context.Context, bool) {}, nil
		},
		BeginUpdate: func(context.Context, runtime.Object, runtime.Object, *metav1.UpdateOptions) (generic.FinishFunc, error) {
			log.add("beginUpdate")
			return func(context.Context, bool) {}, nil
		},
	}
	return build(t, r)["configmaps"].(registrytest.ResourceStorage), log
}

// labelling is a mutating admission that labels the object, recording
// its step with the name it sees and whether it had an old object.
func labelling(log *steps) rest.MutateObjectFunc {
	return func(_ context.Context, obj, old runtime.Object) error {
		cm := obj.(*corev1.ConfigMap)
		step := "mutate " + cm.Name
		if old != nil {
			step += " old"
		}
		log.add(step)
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels["mutated"] = "true"
		return nil
	}
}

// TestCreateMutating: the mutation given to a create runs once, after
// the Begin hooks, before the name is generated and the strategy
// prepares and validates; a dry run returns the mutated object and
// stores nothing; with no mutation, none runs.
func TestCreateMutating(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		obj         metav1.ObjectMeta
		mutate      bool
		dryRun      bool
		wantSteps   []string
		wantLabeled bool
	}{
		{name: "mutation after hooks before strategy", obj: metav1.ObjectMeta{Name: "a"}, mutate: true,
			wantSteps: []string{"beginCreate", "mutate a", "prepare a", "validate"}, wantLabeled: true},
		{name: "no mutation given", obj: metav1.ObjectMeta{Name: "b"},
			wantSteps: []string{"beginCreate", "prepare b", "validate"}},
		{name: "name generated after mutation", obj: metav1.ObjectMeta{GenerateName: "gen-"}, mutate: true,
			wantSteps: []string{"beginCreate", "mutate ", "prepare gen-", "validate"}, wantLabeled: true},
		{name: "dry run mutates and stores nothing", obj: metav1.ObjectMeta{Name: "c"}, mutate: true, dryRun: true,
			wantSteps: []string{"beginCreate", "mutate c", "prepare c", "validate"}, wantLabeled: true},
	}
	s, log := mutationStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mutate rest.MutateObjectFunc
			if tc.mutate {
				mutate = labelling(log)
			}
			opts := &metav1.CreateOptions{}
			if tc.dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			obj, err := s.(rest.MutatingCreater).CreateMutating(ctx, &corev1.ConfigMap{ObjectMeta: tc.obj}, mutate, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := log.take()
			// The generated name is not known in advance: compare its prefix.
			for i, step := range got {
				if suffix, ok := strings.CutPrefix(step, "prepare gen-"); ok && suffix != "" {
					got[i] = "prepare gen-"
				}
			}
			if !slices.Equal(got, tc.wantSteps) {
				t.Errorf("steps: got %q, want %q", got, tc.wantSteps)
			}
			cm := obj.(*corev1.ConfigMap)
			if labeled := cm.Labels["mutated"] == "true"; labeled != tc.wantLabeled {
				t.Errorf("returned object labelled %v, want %v", labeled, tc.wantLabeled)
			}
			_, err = s.Get(ctx, cm.Name, &metav1.GetOptions{})
			if stored := err == nil; stored == tc.dryRun {
				t.Errorf("stored %v (get: %v) on a dry run %v", stored, err, tc.dryRun)
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		})
	}
}

// TestUpdateMutating: the mutation an update's info carries runs once
// per try, after the Begin hooks and before the strategy, with the old
// object (none when the update creates); a dry run returns the mutated
// object and stores nothing; with no mutation, none runs.
func TestUpdateMutating(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		target      string
		mutate      bool
		dryRun      bool
		wantSteps   []string
		wantLabeled bool
		wantStored  bool
	}{
		{name: "mutation after hooks before strategy", target: "a", mutate: true,
			wantSteps: []string{"beginUpdate", "mutate a old", "prepareUpdate", "validateUpdate"}, wantLabeled: true, wantStored: true},
		{name: "no mutation given", target: "b",
			wantSteps: []string{"beginUpdate", "prepareUpdate", "validateUpdate"}},
		{name: "dry run mutates and stores nothing", target: "c", mutate: true, dryRun: true,
			wantSteps: []string{"beginUpdate", "mutate c old", "prepareUpdate", "validateUpdate"}, wantLabeled: true},
		{name: "update that creates mutates as a create", target: "new", mutate: true,
			wantSteps: []string{"beginCreate", "mutate new", "prepare new", "validate"}, wantLabeled: true, wantStored: true},
	}
	s, log := mutationStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	for _, name := range []string{"a", "b", "c"} {
		createCM(t, ctx, s, name)
	}
	log.take()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mutate rest.MutateObjectFunc
			if tc.mutate {
				mutate = labelling(log)
			}
			opts := &metav1.UpdateOptions{}
			if tc.dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			info := rest.WithUpdateMutation(&rest.DefaultUpdatedObjectInfo{
				Obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tc.target, Namespace: "ns"}, Data: map[string]string{"k": "v"}},
			}, mutate)
			obj, _, err := s.Update(ctx, tc.target, info, nil, nil, true, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := log.take(); !slices.Equal(got, tc.wantSteps) {
				t.Errorf("steps: got %q, want %q", got, tc.wantSteps)
			}
			if labeled := obj.(*corev1.ConfigMap).Labels["mutated"] == "true"; labeled != tc.wantLabeled {
				t.Errorf("returned object labelled %v, want %v", labeled, tc.wantLabeled)
			}
			if stored := getCM(t, ctx, s, tc.target).Labels["mutated"] == "true"; stored != tc.wantStored {
				t.Errorf("stored object labelled %v, want %v", stored, tc.wantStored)
			}
		})
	}
}
