package storagegroup

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDefaultClass(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	class := func(name string, created time.Time, annotation string) *storagev1.StorageClass {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}}
		if annotation != "" {
			sc.Annotations = map[string]string{annotation: "true"}
		}
		return sc
	}
	for _, tc := range []struct {
		name    string
		classes []*storagev1.StorageClass
		want    string
	}{
		{"none marked", []*storagev1.StorageClass{class("a", t0, "")}, ""},
		{"GA annotation", []*storagev1.StorageClass{class("a", t0, ""), class("b", t0, IsDefaultStorageClassAnnotation)}, "b"},
		{"beta annotation", []*storagev1.StorageClass{class("a", t0, betaIsDefaultStorageClassAnnotation)}, "a"},
		{"newest wins", []*storagev1.StorageClass{class("old", t0, IsDefaultStorageClassAnnotation), class("new", t0.Add(time.Second), IsDefaultStorageClassAnnotation)}, "new"},
		{"same time: first name", []*storagev1.StorageClass{class("z", t0, IsDefaultStorageClassAnnotation), class("m", t0, IsDefaultStorageClassAnnotation)}, "m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if sc := DefaultClass(tc.classes); sc != nil {
				got = sc.Name
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAllowedTopologies: kube reports an empty term, and a term equal to
// an earlier one (its keys' last values), as duplicates.
func TestAllowedTopologies(t *testing.T) {
	term := func(exprs ...corev1.TopologySelectorLabelRequirement) corev1.TopologySelectorTerm {
		return corev1.TopologySelectorTerm{MatchLabelExpressions: exprs}
	}
	req := func(key string, values ...string) corev1.TopologySelectorLabelRequirement {
		return corev1.TopologySelectorLabelRequirement{Key: key, Values: values}
	}
	for _, tc := range []struct {
		name  string
		terms []corev1.TopologySelectorTerm
		want  []string
	}{
		{"distinct", []corev1.TopologySelectorTerm{term(req("zone", "a")), term(req("zone", "b"))}, nil},
		{"empty term", []corev1.TopologySelectorTerm{term()}, []string{"allowedTopologies[0].matchLabelExpressions: Duplicate value: \"\""}},
		{"equal terms", []corev1.TopologySelectorTerm{term(req("zone", "a", "b")), term(req("zone", "b", "a"))},
			[]string{"allowedTopologies[1].matchLabelExpressions: Duplicate value: \"\""}},
		{"repeated key keeps the last values", []corev1.TopologySelectorTerm{term(req("k", "a"), req("k", "b")), term(req("k", "b"))},
			[]string{"allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: \"k\"", "allowedTopologies[1].matchLabelExpressions: Duplicate value: \"\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateAllowedTopologies(tc.terms, field.NewPath("allowedTopologies"))
			if len(errs) != len(tc.want) {
				t.Fatalf("got %v, want %v", errs, tc.want)
			}
			for i, e := range errs {
				if e.Error() != tc.want[i] {
					t.Errorf("error %d: got %q, want %q", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}
