package generic_test

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// TestWarningStrategy: create and update warn about the object written,
// the old one playing no part, and the strategy is scoped as asked.
func TestWarningStrategy(t *testing.T) {
	ctx := context.Background()
	s := generic.NewWarningStrategy(true, func(cm *corev1.ConfigMap) []string { return []string{"warn " + cm.Name} })
	var _ generic.Strategy = s
	cm, old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old"}}
	if got := s.WarningsOnCreate(ctx, cm); !reflect.DeepEqual(got, []string{"warn new"}) {
		t.Errorf("create warnings %q", got)
	}
	if got := s.WarningsOnUpdate(ctx, cm, old); !reflect.DeepEqual(got, []string{"warn new"}) {
		t.Errorf("update warnings %q", got)
	}
	if !s.NamespaceScoped() || generic.NewWarningStrategy(false, func(*corev1.Node) []string { return nil }).NamespaceScoped() {
		t.Error("scope not as asked")
	}
}
