package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// echoStorage stands in for the registry: Create returns the object it
// is given, so that a benchmark measures the handler alone (decoding,
// defaulting, managed fields, encoding).
type echoStorage struct{ newFunc func() runtime.Object }

func (s echoStorage) New() runtime.Object { return s.newFunc() }
func (s echoStorage) Destroy()            {}
func (s echoStorage) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	return obj, nil
}

// benchObjects are a ConfigMap as hack/bench creates them (1 KiB of data)
// and a Deployment as kubectl would send it.
func benchObjects() []struct {
	name string
	kind schema.GroupVersionKind
	new  func() runtime.Object
	obj  runtime.Object
} {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "bench-1", Labels: map[string]string{"bucket": "1"}},
		Data:       map[string]string{"data": strings.Repeat("x", 1024)},
	}
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "nginx", Image: "nginx:1.25",
					Ports: []corev1.ContainerPort{{ContainerPort: 80}},
					Env:   []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
				}}},
			},
		},
	}
	return []struct {
		name string
		kind schema.GroupVersionKind
		new  func() runtime.Object
		obj  runtime.Object
	}{
		{"configmap", corev1.SchemeGroupVersion.WithKind("ConfigMap"), func() runtime.Object { return &corev1.ConfigMap{} }, cm},
		{"deployment", appsv1.SchemeGroupVersion.WithKind("Deployment"), func() runtime.Object { return &appsv1.Deployment{} }, deploy},
	}
}

// BenchmarkCreateHandler is POST through the create handler, with the
// registry replaced by an echo: the share of the field manager in a
// create is BenchmarkFieldManager/create over this.
func BenchmarkCreateHandler(b *testing.B) {
	for _, tc := range benchObjects() {
		b.Run(tc.name, func(b *testing.B) {
			storage := echoStorage{newFunc: tc.new}
			s := &Scope{Resource: tc.kind.GroupVersion().WithResource("things"), Kind: tc.kind, Namespaced: true, Storage: storage}
			h := s.Create(storage)
			body, err := json.Marshal(tc.obj)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/things", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("User-Agent", "bench/1")
				w := httptest.NewRecorder()
				h(w, r)
				if w.Code != http.StatusCreated {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// BenchmarkFieldManager is the field manager's work on one write: the
// Update operation of a create (from an empty object) and of an update
// (one field changed), and the Apply of the object's configuration on
// the object it created.
func BenchmarkFieldManager(b *testing.B) {
	for _, tc := range benchObjects() {
		storage := echoStorage{newFunc: tc.new}
		s := &Scope{Resource: tc.kind.GroupVersion().WithResource("things"), Kind: tc.kind, Namespaced: true, Storage: storage}
		fm, err := s.fieldManager()
		if err != nil {
			b.Fatal(err)
		}
		created, err := s.trackUpdate(tc.new(), tc.obj.DeepCopyObject(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		changed := created.DeepCopyObject()
		changed.(metav1.Object).SetLabels(map[string]string{"app": "web", "changed": "yes"})
		config := &unstructured.Unstructured{}
		data, _ := json.Marshal(tc.obj)
		if err := json.Unmarshal(data, &config.Object); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name+"/create", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fm.UpdateNoErrors(tc.new(), tc.obj.DeepCopyObject(), "bench")
			}
		})
		b.Run(tc.name+"/update", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fm.UpdateNoErrors(created, changed.DeepCopyObject(), "other")
			}
		})
		b.Run(tc.name+"/apply", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fm.Apply(created.DeepCopyObject(), config.DeepCopy(), "bench", false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
