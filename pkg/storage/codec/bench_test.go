package codec_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/codec"
)

func benchObjects() map[string]runtime.Object {
	return map[string]runtime.Object{
		"configmap-1KiB": &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "bench", UID: "00000000-0000-0000-0000-000000000001", Labels: map[string]string{"bucket": "7"}},
			Data:       map[string]string{"data": strings.Repeat("x", 1024)}},
		"pod": &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f8b6c5d-abcde", Namespace: "bench", UID: "00000000-0000-0000-0000-000000000002",
				Labels: map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5d"}, CreationTimestamp: metav1.Now(),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8b6c5d", UID: "u"}}},
			Spec: corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "default", Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
				Env:       []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}, TerminationMessagePath: "/dev/termination-log"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: "True"}}}},
	}
}

// BenchmarkCodec: the CPU a stored value costs in each media type: Decode
// is paid once per change the watch cache ingests and per item of a LIST
// read from etcd, Encode once per write.
func BenchmarkCodec(b *testing.B) {
	for name, obj := range benchObjects() {
		for _, mediaType := range []string{storage.MediaTypeJSON, storage.MediaTypeProtobuf} {
			c, _ := codec.New(api.Scheme(), mediaType)
			data, _ := storage.Encode(obj.DeepCopyObject())
			stored, _ := c.Encode(obj, data)
			mt := mediaType[len("application/"):]
			b.Run(name+"/"+mt+"/decode", func(b *testing.B) {
				b.ReportAllocs()
				b.ReportMetric(float64(len(stored)), "stored-bytes")
				for b.Loop() {
					if _, _, err := c.Decode(stored, newOf(obj)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/"+mt+"/encode", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Encode(obj, data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func newOf(obj runtime.Object) func() runtime.Object {
	switch obj.(type) {
	case *corev1.Pod:
		return func() runtime.Object { return &corev1.Pod{} }
	default:
		return func() runtime.Object { return &corev1.ConfigMap{} }
	}
}
