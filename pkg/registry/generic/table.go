package generic

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var objectMetaDocs = metav1.ObjectMeta{}.SwaggerDoc()

// NameColumn and AgeColumn are the first and last columns of kube's
// printers.
var (
	NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDocs["name"]}
	AgeColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDocs["creationTimestamp"]}
)

// TablePrinter renders one resource as table rows: the column definitions
// and, per object, its cells.
type TablePrinter struct {
	Columns []metav1.TableColumnDefinition
	// Cells returns the cells of obj, one per column.
	Cells func(obj runtime.Object) ([]interface{}, error)
	// Conditions, when set, returns the row conditions of obj (kube marks
	// finished pods "Completed", which kubectl hides by default).
	Conditions func(obj runtime.Object) []metav1.TableRowCondition
}

// CreatedAtColumn is the second column of kube's default table: the
// creation time in RFC 3339.
var CreatedAtColumn = metav1.TableColumnDefinition{Name: "Created At", Type: "date", Description: objectMetaDocs["creationTimestamp"]}

// DefaultTableConvertor prints NAME and CREATED AT, as kube does for
// resources without a printer of their own (limitranges, ...).
func DefaultTableConvertor(gr schema.GroupResource) rest.TableConvertor {
	return defaultTable{TablePrinter{
		Columns: []metav1.TableColumnDefinition{NameColumn, CreatedAtColumn},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("%s cannot be printed as a table: %v", gr, err))
			}
			return []interface{}{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)}, nil
		},
	}}
}

// defaultTable is the default table, whose empty list has no rows
// (null), where kube's printers give an empty array.
type defaultTable struct{ TablePrinter }

func (d defaultTable) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table, err := d.TablePrinter.ConvertToTable(ctx, obj, tableOptions)
	if err == nil && len(table.Rows) == 0 {
		table.Rows = nil
	}
	return table, err
}

// ConvertToTable implements rest.TableConvertor for one object or a list.
// Row objects are left empty: the HTTP layer fills them as the request's
// includeObject asks.
func (p TablePrinter) ConvertToTable(_ context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{Rows: []metav1.TableRow{}}
	add := func(o runtime.Object) error {
		cells, err := p.Cells(o)
		if err != nil {
			return err
		}
		row := metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: o}}
		if p.Conditions != nil {
			row.Conditions = p.Conditions(o)
		}
		table.Rows = append(table.Rows, row)
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, add); err != nil {
			return nil, err
		}
		if lm, err := meta.ListAccessor(obj); err == nil {
			table.ResourceVersion = lm.GetResourceVersion()
			table.Continue = lm.GetContinue()
			table.RemainingItemCount = lm.GetRemainingItemCount()
		}
	} else {
		if err := add(obj); err != nil {
			return nil, err
		}
		if m, err := meta.Accessor(obj); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
	}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = p.Columns
	}
	return table, nil
}

// TranslateTimestampSince is kube's AGE: a short human duration, or
// "<unknown>" for a zero time.
func TranslateTimestampSince(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}

// NameValueAgeTable is the table of a kind whose printer shows one value
// between the name and the age (config maps' data count, leases' holder,
// namespaces' phase...): column describes it, value gives it for an
// object.
func NameValueAgeTable[T interface {
	runtime.Object
	metav1.Object
}](column metav1.TableColumnDefinition, value func(obj T) interface{}) TablePrinter {
	return TablePrinter{
		Columns: []metav1.TableColumnDefinition{NameColumn, column, AgeColumn},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			o := obj.(T)
			return []interface{}{o.GetName(), value(o), TranslateTimestampSince(o.GetCreationTimestamp())}, nil
		},
	}
}
