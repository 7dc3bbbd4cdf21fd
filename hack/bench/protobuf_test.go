package main

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestDecodeProtobufList reads a list as apimachinery's protobuf
// serializer (kube-apiserver's) writes it.
func TestDecodeProtobufList(t *testing.T) {
	list := &corev1.ConfigMapList{
		TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"},
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "token"},
		Items: []corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "bench-0", ResourceVersion: "7", UID: "u", Labels: map[string]string{"bucket": "0", "a": "b"}},
				Data: map[string]string{"data": "x"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "bench-1", ResourceVersion: "8"}},
		},
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &buf); err != nil {
		t.Fatal(err)
	}
	page, err := decodeProtobufList(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if page.Metadata.ResourceVersion != "42" || page.Metadata.Continue != "token" || len(page.Items) != 2 {
		t.Fatalf("got %+v", page)
	}
	first, second := page.Items[0].Metadata, page.Items[1].Metadata
	if first.Name != "bench-0" || first.ResourceVersion != "7" || len(first.Labels) != 2 || first.Labels["bucket"] != "0" ||
		second.Name != "bench-1" || second.ResourceVersion != "8" || second.Labels != nil {
		t.Errorf("items %+v, %+v", first, second)
	}
	if _, err := decodeProtobufList([]byte(`{"items":[]}`)); err == nil {
		t.Error("a JSON body decoded as protobuf")
	}
}
