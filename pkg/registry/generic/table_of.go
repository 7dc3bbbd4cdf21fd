package generic

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TableOf is the TablePrinter of kind T: columns, and cells giving an
// object's cells in their order. It saves each printer the assertion of
// its object's type (an object of another type panics, as the assertion
// did).
func TableOf[T runtime.Object](columns []metav1.TableColumnDefinition, cells func(obj T) ([]interface{}, error)) TablePrinter {
	return TablePrinter{Columns: columns, Cells: func(obj runtime.Object) ([]interface{}, error) { return cells(obj.(T)) }}
}
