package generic

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TableOf is the TablePrinter of kind T (or of an interface its objects
// implement): columns, and cells giving an object's cells in their order. It saves each printer the assertion of
// its object's type (an object of another type panics, as the assertion
// did).
func TableOf[T any](columns []metav1.TableColumnDefinition, cells func(obj T) ([]interface{}, error)) TablePrinter {
	return TablePrinter{Columns: columns, Cells: func(obj runtime.Object) ([]interface{}, error) { return cells(obj.(T)) }}
}

// NameAgeTable is the printer of kinds kube shows by NAME and AGE alone
// (device classes, resource claim templates, service accounts).
var NameAgeTable = TableOf([]metav1.TableColumnDefinition{NameColumn, AgeColumn}, func(obj metav1.Object) ([]interface{}, error) {
	return []interface{}{obj.GetName(), TranslateTimestampSince(obj.GetCreationTimestamp())}, nil
})
