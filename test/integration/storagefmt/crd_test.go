package storagefmt

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// kubeStoredCRD returns a definition as kube-apiserver v1.37.2 stores it:
// apiextensions.k8s.io/v1beta1 JSON, ending in a newline.
func kubeStoredCRD(t *testing.T) []byte {
	t.Helper()
	scheme := runtime.NewScheme()
	install.Install(scheme)
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", UID: "uid-crd", CreationTimestamp: metav1.Now()},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					XPreserveUnknownFields: ptr(true)}}}},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1"}},
	}
	// kube's path: the request decoded to the internal type, stored
	// through its storage codec (LegacyCodec(v1beta1, v1): JSON).
	codecs := serializer.NewCodecFactory(scheme)
	v1JSON, err := json.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	internal, _, err := codecs.UniversalDecoder().Decode(v1JSON, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := codecs.LegacyCodec(apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion).Encode(internal, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestServesKubeStoredCRD: a definition kube stored (v1beta1 JSON) and
// its custom resource (JSON at <group>/<resource>) are served: the
// definition as v1, and the resource once the definition is established.
func TestServesKubeStoredCRD(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stored := kubeStoredCRD(t)
	if !bytes.Contains(stored, []byte(`"apiVersion":"apiextensions.k8s.io/v1beta1"`)) {
		t.Fatalf("not kube's stored form: %s", stored)
	}
	for key, value := range map[string]string{
		"/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com": string(stored),
		"/registry/namespaces/default":             kubeProtobuf(t, kubeObjects()["/registry/namespaces/from-kube"]),
		"/registry/example.com/widgets/default/w1": `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"creationTimestamp":"2026-12-01T00:00:00Z","name":"w1","namespace":"default","uid":"uid-w1"},"spec":{"size":3}}` + "\n",
	} {
		if _, err := etcd.Client.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	ts := testserver.Start(t, testserver.WithEtcd(etcd.URL()))
	dyn := dynamic.NewForConfigOrDie(ts.ClientConfig)
	crd, err := dyn.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")).Get(ctx, "widgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if crd.GetAPIVersion() != "apiextensions.k8s.io/v1" {
		t.Errorf("the definition is served as %s, want apiextensions.k8s.io/v1", crd.GetAPIVersion())
	}
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	for {
		w, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
		if err == nil {
			if size, _, _ := unstructuredInt(w.Object, "spec", "size"); size != 3 {
				t.Errorf("widget: %v", w.Object)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the widget kube stored is not served: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[f]
	}
	n, ok := cur.(int64)
	return n, ok, nil
}
