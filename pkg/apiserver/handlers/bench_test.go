package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// configMapStorage is the least a Scope needs to decode ConfigMaps.
type configMapStorage struct{}

func (configMapStorage) New() runtime.Object { return &corev1.ConfigMap{} }
func (configMapStorage) Destroy()            {}

func benchConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "bench-7", Namespace: "bench", UID: "0000-7", ResourceVersion: "42",
			Labels: map[string]string{"bucket": "7"}, CreationTimestamp: metav1.Now()},
		Data: map[string]string{"data": strings.Repeat("x", 1024)},
	}
}

// BenchmarkDecodeRequest: a create's JSON body (a 1 KiB ConfigMap) decoded
// into the typed object, with the default (Warn) field validation.
func BenchmarkDecodeRequest(b *testing.B) {
	scope := &Scope{Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Storage: configMapStorage{}}
	body, err := json.Marshal(benchConfigMap())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest("POST", "/api/v1/namespaces/bench/configmaps", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if _, err := scope.decodeBody(r, body, fieldValidationWarn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeObject: a typed object encoded as a JSON response (the
// answer of a GET from etcd, a create, an update), against the stored
// bytes written as they are (the answer of a LIST or WATCH from the cache).
func BenchmarkEncodeObject(b *testing.B) {
	cm := benchConfigMap()
	out, err := negotiation.NegotiateOutput(httptest.NewRequest("GET", "/", nil))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := out.Info.Serializer.Encode(cm, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	data, err := storage.Encode(cm.DeepCopy())
	if err != nil {
		b.Fatal(err)
	}
	obj, err := storage.NewObject("/registry/configmaps/bench/bench-7", 42, data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("stored bytes", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			buf = obj.AppendJSON(buf[:0], true)
			io.Discard.Write(buf)
		}
	})
}
