package apiextensions

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// storedV1beta1 marks a definition as kube-apiserver stores it: as
// apiextensions.k8s.io/v1beta1 JSON (its storage codec prefers v1beta1,
// the more compact form, kubernetes/kubernetes#82292), kind and
// apiVersion first.
var storedV1beta1 = []byte(`"apiVersion":"apiextensions.k8s.io/v1beta1"`)

// crdScheme holds apiextensions-apiserver's internal definition, its
// versions, their defaults and conversions (through the internal type,
// the hub); crdDecoder decodes any version into the internal type.
var (
	crdScheme  = runtime.NewScheme()
	crdDecoder = func() runtime.Decoder {
		install.Install(crdScheme)
		return serializer.NewCodecFactory(crdScheme).UniversalDecoder()
	}()
)

// normalizeStoredCRD turns a definition kube-apiserver stored
// (v1beta1) into the v1 this server serves and stores; v1 values are
// returned as they are. kube reads the v1 values this server writes.
func normalizeStoredCRD(data []byte) ([]byte, error) {
	if !bytes.Contains(data[:min(len(data), 128)], storedV1beta1) {
		return data, nil
	}
	internal, _, err := crdDecoder.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding a v1beta1 CustomResourceDefinition: %w", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := crdScheme.Convert(internal, crd, nil); err != nil {
		return nil, fmt.Errorf("converting a v1beta1 CustomResourceDefinition: %w", err)
	}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	crd.ResourceVersion = ""
	return json.Marshal(crd)
}
