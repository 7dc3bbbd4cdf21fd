package admission

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// fakeNamespaces answers Get with the namespaces it holds.
type fakeNamespaces map[string]*corev1.Namespace

func (f fakeNamespaces) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if ns, ok := f[name]; ok {
		return ns.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

func annotated(name string, annotations map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

func podAttributes(op handlers.Operation, ns string) handlers.Attributes {
	return handlers.Attributes{Operation: op, Namespace: ns, Resource: corev1.SchemeGroupVersion.WithResource("pods")}
}

var (
	anyTaint    = corev1.Toleration{Operator: corev1.TolerationOpExists}
	fooExists   = corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpExists}
	fooNoSched  = corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	fooBar      = corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}
	fooBarNoOp  = corev1.Toleration{Key: "foo", Value: "bar", Effect: corev1.TaintEffectNoSchedule}
	fooExec60   = corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}
	fooExec30   = corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}
	fooExecEver = corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	barExists   = corev1.Toleration{Key: "bar", Operator: corev1.TolerationOpExists}
)

// TestToleratesAll: kube's notion of one toleration covering another.
func TestToleratesAll(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		wide, narrow corev1.Toleration
		want         bool
	}{
		{"the same", fooBar, fooBar, true},
		{"exists without key covers any key", anyTaint, barExists, true},
		{"exists covers a value", fooExists, fooBar, true},
		{"any effect covers one", fooExists, fooNoSched, true},
		{"one effect does not cover any", fooNoSched, fooExists, false},
		{"another key", fooExists, barExists, false},
		{"a longer time covers a shorter", fooExec60, fooExec30, true},
		{"a shorter time does not cover a longer", fooExec30, fooExec60, false},
		{"a time does not cover forever", fooExec60, fooExecEver, false},
		{"forever covers a time", fooExecEver, fooExec30, true},
		{"an empty operator is Equal on the wide side", fooBarNoOp, fooBar, true},
		{"but not on the narrow side", fooBar, fooBarNoOp, false},
		{"equal does not cover exists", fooBar, fooNoSched, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toleratesAll(tc.wide, tc.narrow); got != tc.want {
				t.Errorf("toleratesAll(%v, %v) = %v, want %v", tc.wide, tc.narrow, got, tc.want)
			}
		})
	}
}

// TestMergeTolerations: what a covered toleration leaves, in order.
func TestMergeTolerations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"none", nil, nil, nil},
		{"disjoint, in order", []corev1.Toleration{fooBar}, []corev1.Toleration{barExists}, []corev1.Toleration{fooBar, barExists}},
		{"a duplicate once", []corev1.Toleration{fooBar}, []corev1.Toleration{fooBar}, []corev1.Toleration{fooBar}},
		{"a later wider one replaces", []corev1.Toleration{fooBar, barExists}, []corev1.Toleration{fooExists}, []corev1.Toleration{barExists, fooExists}},
		{"an earlier wider one stays", []corev1.Toleration{fooExec60}, []corev1.Toleration{fooExec30}, []corev1.Toleration{fooExec60}},
		{"everything", []corev1.Toleration{fooBar, barExists}, []corev1.Toleration{anyTaint}, []corev1.Toleration{anyTaint}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mergeTolerations(tc.first, tc.second)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAllowedBy: each toleration must be covered by one of the whitelist.
func TestAllowedBy(t *testing.T) {
	t.Parallel()
	whitelist := []corev1.Toleration{fooExists, fooExec60}
	for _, tc := range []struct {
		name        string
		tolerations []corev1.Toleration
		whitelist   []corev1.Toleration
		want        bool
	}{
		{"an empty whitelist allows all", []corev1.Toleration{anyTaint}, nil, true},
		{"covered", []corev1.Toleration{fooBar, fooExec30}, whitelist, true},
		{"one not covered", []corev1.Toleration{fooBar, barExists}, whitelist, false},
		{"forever is not within 60s", []corev1.Toleration{fooExecEver}, []corev1.Toleration{fooExec60}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := allowedBy(tc.tolerations, tc.whitelist); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPodTolerationRestrictionEdges: the annotations' edge cases, as
// kube's plugin reads them.
func TestPodTolerationRestrictionEdges(t *testing.T) {
	t.Parallel()
	cluster := &PodTolerationRestrictionConfig{Default: []corev1.Toleration{barExists}, Whitelist: []corev1.Toleration{barExists}}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		op          handlers.Operation
		sent        []corev1.Toleration
		want        []corev1.Toleration
		wantErr     string
		wantCode    int32
	}{
		{name: "no annotation: the cluster's", want: []corev1.Toleration{barExists}},
		{name: "an empty default: none, not the cluster's", annotations: map[string]string{NamespaceDefaultTolerations: ""}},
		{name: "null default: none", annotations: map[string]string{NamespaceDefaultTolerations: "null"}},
		{name: "the namespace's default", annotations: map[string]string{NamespaceDefaultTolerations: `[{"key":"foo","operator":"Exists"}]`},
			sent: []corev1.Toleration{fooBar}, wantErr: "pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist", wantCode: 500},
		{name: "an empty whitelist: the namespace allows any", annotations: map[string]string{NamespaceDefaultTolerations: `[{"key":"foo","operator":"Exists"}]`, NamespaceTolerationsWhitelist: ""},
			sent: []corev1.Toleration{fooBar}, want: []corev1.Toleration{fooExists}},
		{name: "not JSON", annotations: map[string]string{NamespaceDefaultTolerations: "foo"},
			wantErr: "invalid character 'o' in literal false (expecting 'a')", wantCode: 500},
		{name: "updates get no defaults", op: handlers.Update, sent: []corev1.Toleration{barExists}, want: []corev1.Toleration{barExists}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &PodTolerationRestriction{Namespaces: fakeNamespaces{"ns": annotated("ns", tc.annotations)}, Config: cluster}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Tolerations: tc.sent}}
			op := tc.op
			if op == "" {
				op = handlers.Create
			}
			err := p.Admit(context.Background(), podAttributes(op, "ns"), pod)
			if tc.wantErr != "" {
				status, ok := err.(apierrors.APIStatus)
				if !ok || status.Status().Message != tc.wantErr || status.Status().Code != tc.wantCode || status.Status().Reason != "" {
					t.Fatalf("got %v, want a %d without reason: %q", err, tc.wantCode, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pod.Spec.Tolerations); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
		})
	}
}
