package generic_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// TestTableOf: the typed cells get the object itself, and the printer
// renders them under the given columns.
func TestTableOf(t *testing.T) {
	p := generic.TableOf([]metav1.TableColumnDefinition{generic.NameColumn, {Name: "Node", Type: "string"}},
		func(pod *corev1.Pod) ([]interface{}, error) { return []interface{}{pod.Name, pod.Spec.NodeName}, nil })
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	table, err := p.ConvertToTable(context.Background(), pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 2 || len(table.Rows) != 1 {
		t.Fatalf("got %d columns and %d rows, want 2 and 1", len(table.ColumnDefinitions), len(table.Rows))
	}
	if got := table.Rows[0].Cells; len(got) != 2 || got[0] != "p" || got[1] != "n1" {
		t.Errorf("cells = %v, want [p n1]", got)
	}
}

// TestNameAgeTable: any object prints as its name and age.
func TestNameAgeTable(t *testing.T) {
	table, err := generic.NameAgeTable.ConvertToTable(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := table.Rows[0].Cells; len(got) != 2 || got[0] != "sa" || got[1] != "<unknown>" {
		t.Errorf("cells = %v, want [sa <unknown>]", got)
	}
}
