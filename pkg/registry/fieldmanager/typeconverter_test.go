package fieldmanager

import (
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/api/openapi"
	"github.com/miniapiserver/miniapiserver/api/openapi/structure"
)

// kubeConverter is the converter apimachinery builds from
// definitions.json, which the generated one replaces.
func kubeConverter(t testing.TB) managedfields.TypeConverter {
	t.Helper()
	defs, err := openapi.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := managedfields.NewTypeConverter(defs, false)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// TestConverterFindsKubesTypes checks that every kind the scheme knows
// (internal versions and unserved kinds included) and every generated
// kind has the type apimachinery's converter gives it, or the same
// error.
func TestConverterFindsKubesTypes(t *testing.T) {
	kube := kubeConverter(t)
	ours, err := typeConverter()
	if err != nil {
		t.Fatal(err)
	}
	kinds := []schema.GroupVersionKind{{Group: "example.com", Version: "v1", Kind: "Unknown"}}
	for gvk := range api.Scheme().AllKnownTypes() {
		kinds = append(kinds, gvk)
	}
	for _, k := range structure.Kinds {
		kinds = append(kinds, schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind})
	}
	found := 0
	for _, gvk := range kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		want, wantErr := kube.ObjectToTyped(u)
		got, gotErr := ours.ObjectToTyped(u)
		if (gotErr == nil) != (wantErr == nil) || isNoType(gotErr) != isNoType(wantErr) || isNoType(gotErr) && gotErr.Error() != wantErr.Error() {
			t.Errorf("%v: error %q, want %q", gvk, errText(gotErr), errText(wantErr))
			continue
		}
		if wantErr != nil {
			// A kind of no type, or one that is no object with apiVersion
			// and kind (WatchEvent): the unknown field the validation
			// names first depends on a map's order.
			continue
		}
		found++
		if w, g := *want.TypeRef().NamedType, *got.TypeRef().NamedType; w != g {
			t.Errorf("%v: type %s, want %s", gvk, g, w)
		}
	}
	if found < len(structure.Kinds) {
		t.Errorf("%d kinds found, want at least the %d generated", found, len(structure.Kinds))
	}
	if _, err := ours.ObjectToTyped(&unstructured.Unstructured{}); !isNoType(err) {
		t.Errorf("an object of no kind: %v, want kube's no corresponding type", err)
	}
}

// isNoType is whether err is apimachinery's error for a kind of no
// type, which its merge tells from others by its type.
func isNoType(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "no corresponding type for ")
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestConverterParsesAsKube checks a typed object's fields and its way
// back to an object against apimachinery's converter.
func TestConverterParsesAsKube(t *testing.T) {
	kube := kubeConverter(t)
	ours, err := typeConverter()
	if err != nil {
		t.Fatal(err)
	}
	obj := deployment(map[string]string{"app": "web"}, 3)
	want, err := kube.ObjectToTyped(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ours.ObjectToTyped(obj)
	if err != nil {
		t.Fatal(err)
	}
	wantSet, err := want.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	gotSet, err := got.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	if !gotSet.Equals(wantSet) {
		t.Errorf("fields:\n%s\nwant:\n%s", gotSet, wantSet)
	}
	back, err := ours.TypedToObject(got)
	if err != nil {
		t.Fatal(err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !equality(back.(*unstructured.Unstructured).Object, content) {
		t.Errorf("back to an object: %v, want %v", back, content)
	}
}

func equality(a, b map[string]interface{}) bool {
	ua, ub := &unstructured.Unstructured{Object: a}, &unstructured.Unstructured{Object: b}
	ja, _ := ua.MarshalJSON()
	jb, _ := ub.MarshalJSON()
	return string(ja) == string(jb)
}

func deployment(labels map[string]string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx",
					Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				}}},
			},
		},
	}
}

// TestApplyConflicts applies through the field manager New builds on the
// generated converter: managers own what they apply, a second manager's
// different value conflicts unless forced, and forcing moves ownership.
func TestApplyConflicts(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	fm, err := New(kind, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	config := func(replicas int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]interface{}{"name": "web", "namespace": "default"},
			"spec": map[string]interface{}{
				"replicas": replicas,
				"template": map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{
					map[string]interface{}{"name": "web", "image": "nginx"},
				}}},
			},
		}}
	}
	live := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}}
	obj, err := fm.Apply(live, config(1), "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(t, obj); got != "alice:Apply" {
		t.Errorf("managers %q, want alice:Apply", got)
	}
	if _, err := fm.Apply(obj, config(2), "bob", false); err == nil || !strings.Contains(err.Error(), ".spec.replicas") {
		t.Errorf("bob's replicas: %v, want a conflict on .spec.replicas", err)
	}
	// The same value is shared, not a conflict.
	shared, err := fm.Apply(obj, config(1), "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(t, shared); got != "alice:Apply,bob:Apply" {
		t.Errorf("managers %q, want alice:Apply,bob:Apply", got)
	}
	forced, err := fm.Apply(obj, config(2), "bob", true)
	if err != nil {
		t.Fatal(err)
	}
	d := forced.(*appsv1.Deployment)
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d, want 2", *d.Spec.Replicas)
	}
	for _, e := range d.ManagedFields {
		if e.Manager == "alice" && strings.Contains(e.FieldsV1.String(), "replicas") {
			t.Errorf("alice still owns replicas: %s", e.FieldsV1)
		}
	}
}

// managers lists obj's managed fields entries, "manager:operation".
func managers(t *testing.T, obj runtime.Object) string {
	t.Helper()
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		t.Fatalf("%T, want a Deployment", obj)
	}
	var out []string
	for _, e := range d.ManagedFields {
		out = append(out, e.Manager+":"+string(e.Operation))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// BenchmarkTypeConverter is what the first write of a server pays for
// the converter of the built-in kinds, and the first object it parses:
// "definitions" decodes definitions.json and converts it, as
// managedfields.NewTypeConverter did at run time; "generated" indexes
// the kinds of the generated structure.
func BenchmarkTypeConverter(b *testing.B) {
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}
	run := func(b *testing.B, build func() (managedfields.TypeConverter, error)) {
		b.ReportAllocs()
		for b.Loop() {
			tc, err := build()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tc.ObjectToTyped(ns); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("definitions", func(b *testing.B) {
		run(b, func() (managedfields.TypeConverter, error) {
			defs, err := openapi.Schemas()
			if err != nil {
				return nil, err
			}
			return managedfields.NewTypeConverter(defs, false)
		})
	})
	b.Run("generated", func(b *testing.B) {
		run(b, func() (managedfields.TypeConverter, error) {
			return newBuiltinConverter(structure.Types, structure.Kinds)
		})
	})
}
