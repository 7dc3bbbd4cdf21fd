package codec_test

import (
	"bytes"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/codec"
)

func kubeProtobuf(t *testing.T, scheme *runtime.Scheme, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme, scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecode(t *testing.T) {
	t.Parallel()
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}, Data: map[string]string{"k": "v"}}
	cmJSON := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"ns"},"data":{"k":"v"}}`
	older := runtime.NewScheme()
	if err := certificatesv1beta1.AddToScheme(older); err != nil {
		t.Fatal(err)
	}
	bundle := &certificatesv1beta1.ClusterTrustBundle{TypeMeta: metav1.TypeMeta{Kind: "ClusterTrustBundle", APIVersion: "certificates.k8s.io/v1beta1"},
		ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: certificatesv1beta1.ClusterTrustBundleSpec{TrustBundle: "pem"}}
	for _, tc := range []struct {
		name      string
		mediaType string
		stored    []byte
		newFunc   func() runtime.Object
		want      string
		wantOther bool
	}{
		{"kube's protobuf", storage.MediaTypeProtobuf, kubeProtobuf(t, api.Scheme(), cm), newConfigMap, cmJSON, false},
		{"kube's protobuf read by a JSON codec", storage.MediaTypeJSON, kubeProtobuf(t, api.Scheme(), cm), newConfigMap, cmJSON, true},
		{"kube's JSON, with its newline", storage.MediaTypeProtobuf, []byte(cmJSON + "\n"), newConfigMap, cmJSON, true},
		{"JSON by a JSON codec", storage.MediaTypeJSON, []byte(cmJSON), newConfigMap, cmJSON, false},
		{"YAML", storage.MediaTypeYAML, []byte("apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: ns\n"), newConfigMap, cmJSON, false},
		{"a custom resource's JSON by a protobuf codec", storage.MediaTypeProtobuf, []byte(`{"apiVersion":"x.io/v1","kind":"W","metadata":{}}`),
			func() runtime.Object { return &unstructured.Unstructured{} }, `{"apiVersion":"x.io/v1","kind":"W","metadata":{}}`, false},
		{"an older storage version kube writes", storage.MediaTypeProtobuf, kubeProtobuf(t, older, bundle),
			func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
			`{"kind":"ClusterTrustBundle","apiVersion":"certificates.k8s.io/v1","metadata":{"name":"b"},"spec":{"trustBundle":"pem"}}`, false},
		{"an older storage version kube writes, as JSON", storage.MediaTypeJSON,
			[]byte(`{"kind":"ClusterTrustBundle","apiVersion":"certificates.k8s.io/v1beta1","metadata":{"name":"b"},"spec":{"trustBundle":"pem"}}` + "\n"),
			func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
			`{"kind":"ClusterTrustBundle","apiVersion":"certificates.k8s.io/v1","metadata":{"name":"b"},"spec":{"trustBundle":"pem"}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := codec.New(api.Scheme(), tc.mediaType)
			if err != nil {
				t.Fatal(err)
			}
			got, other, err := c.Decode(tc.stored, tc.newFunc)
			if err != nil || string(got) != tc.want || other != tc.wantOther {
				t.Errorf("Decode = %s, %v, %v; want %s, %v", got, other, err, tc.want, tc.wantOther)
			}
		})
	}
}

func newConfigMap() runtime.Object { return &corev1.ConfigMap{} }

func TestEncode(t *testing.T) {
	t.Parallel()
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "cm"}}
	data, _ := storage.Encode(cm.DeepCopy())
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "W", "metadata": map[string]any{"name": "w"}}}
	crData, _ := cr.MarshalJSON()
	for _, tc := range []struct {
		name      string
		mediaType string
		obj       runtime.Object
		data      []byte
		want      []byte
	}{
		{"protobuf: kube's bytes", storage.MediaTypeProtobuf, cm, data, kubeProtobuf(t, api.Scheme(), cm)},
		{"JSON", storage.MediaTypeJSON, cm, data, data},
		{"YAML", storage.MediaTypeYAML, cm, data, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")},
		{"custom resources stay JSON", storage.MediaTypeProtobuf, cr, crData, crData},
		{"custom resources stay JSON, YAML asked", storage.MediaTypeYAML, cr, crData, crData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := codec.New(api.Scheme(), tc.mediaType)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Encode(tc.obj, tc.data)
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Errorf("Encode = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	c, _ := codec.New(api.Scheme(), storage.MediaTypeProtobuf)
	if _, err := c.Encode(&corev1.ConfigMap{}, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "without its kind") {
		t.Errorf("encoding an object without its kind: %v, want an error", err)
	}
	if _, err := codec.New(api.Scheme(), "text/plain"); err == nil {
		t.Error("codec.New accepted text/plain")
	}
}

// TestDecodeRestoresEmbeddedKinds: a StatefulSet's claim templates lose
// their kind in protobuf; kube's conversion sets it on every read, and so
// does Decode (an update comparing templates would otherwise see them
// changed).
func TestDecodeRestoresEmbeddedKinds(t *testing.T) {
	t.Parallel()
	sts := &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{Kind: "StatefulSet", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
			TypeMeta: metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}}
	c, _ := codec.New(api.Scheme(), storage.MediaTypeProtobuf)
	got, _, err := c.Decode(kubeProtobuf(t, api.Scheme(), sts), func() runtime.Object { return &appsv1.StatefulSet{} })
	if err != nil || !strings.Contains(string(got), `"volumeClaimTemplates":[{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data"}`) {
		t.Errorf("Decode = %s, %v", got, err)
	}
}
