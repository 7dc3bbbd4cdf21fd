package generic_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// TestAttrFuncOf: the kind's fields join its metadata's, its labels are
// returned, and an object of another type is an error naming it.
func TestAttrFuncOf(t *testing.T) {
	attrs := generic.AttrFuncOf("a secret", true, func(s *corev1.Secret, set fields.Set) { set["type"] = string(s.Type) })
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", Labels: map[string]string{"a": "b"}}, Type: "Opaque"}
	l, f, err := attrs(s)
	if err != nil {
		t.Fatal(err)
	}
	want := fields.Set{"metadata.name": "s", "metadata.namespace": "ns", "type": "Opaque"}
	if l.String() != "a=b" || f.String() != want.String() {
		t.Errorf("labels %v fields %v, want a=b and %v", l, f, want)
	}
	if _, _, err := attrs(&corev1.Pod{}); err == nil || err.Error() != "not a secret: *v1.Pod" {
		t.Errorf("another type: error %v", err)
	}
}
