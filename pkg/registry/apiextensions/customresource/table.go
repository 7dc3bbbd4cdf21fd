package customresource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var objectMetaDocs = metav1.ObjectMeta{}.SwaggerDoc()

// defaultColumns are what a version without additionalPrinterColumns
// prints besides the name, as kube.
var defaultColumns = []apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Age", Type: "date", Description: objectMetaDocs["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"},
}

// table prints the objects of version v: the name, then each of its
// additionalPrinterColumns (a JSON path into the object), as kube's
// table convertor of custom resources. A column whose path does not
// parse leaves the table at the name and the age, as kube falls back.
func (r *resource) table(v *version) rest.TableConvertor {
	cols := v.def.AdditionalPrinterColumns
	if len(cols) == 0 {
		cols = defaultColumns
	}
	t, err := newTable(cols)
	if err != nil {
		t, _ = newTable(defaultColumns)
	}
	return t
}

type table struct {
	headers []metav1.TableColumnDefinition
	paths   []*jsonpath.JSONPath
}

func newTable(cols []apiextensionsv1.CustomResourceColumnDefinition) (*table, error) {
	t := &table{headers: []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: objectMetaDocs["name"]}}}
	for _, col := range cols {
		p := jsonpath.New(col.Name)
		if err := p.Parse(fmt.Sprintf("{%s}", col.JSONPath)); err != nil {
			return nil, fmt.Errorf("unrecognized column definition %q", col.JSONPath)
		}
		p.AllowMissingKeys(true)
		desc := col.Description
		if desc == "" {
			desc = fmt.Sprintf("Custom resource definition column (in JSONPath format): %s", col.JSONPath)
		}
		t.paths = append(t.paths, p)
		t.headers = append(t.headers, metav1.TableColumnDefinition{Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority})
	}
	return t, nil
}

// ConvertToTable implements rest.TableConvertor.
func (t *table) ConvertToTable(_ context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	out := &metav1.Table{}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || opts == nil || !opts.NoHeaders {
		out.ColumnDefinitions = t.headers
	}
	if l, err := meta.ListAccessor(obj); err == nil {
		out.ResourceVersion, out.Continue, out.RemainingItemCount = l.GetResourceVersion(), l.GetContinue(), l.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(obj); err == nil {
		out.ResourceVersion = m.GetResourceVersion()
	}
	var buf bytes.Buffer
	var err error
	out.Rows, err = metatable.MetaToTableRow(obj, func(obj runtime.Object, _ metav1.Object, name, _ string) ([]interface{}, error) {
		cells := make([]interface{}, 1, 1+len(t.paths))
		cells[0] = name
		content := obj.(*unstructured.Unstructured).UnstructuredContent()
		for i, p := range t.paths {
			results, err := p.FindResults(content)
			if err != nil || len(results) == 0 || len(results[0]) == 0 {
				cells = append(cells, nil)
				continue
			}
			// Simple paths only: one result at most.
			value := results[0][0].Interface()
			typ := t.headers[i+1].Type
			if typ != "string" {
				cells = append(cells, cell(typ, value))
				continue
			}
			if err := p.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
				cells = append(cells, nil)
				continue
			}
			cells = append(cells, buf.String())
			buf.Reset()
		}
		return cells, nil
	})
	return out, err
}

// cell is value as a cell of a column of type typ (nil when it is not
// one).
func cell(typ string, value interface{}) interface{} {
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		if s, ok := value.(string); ok {
			var ts metav1.Time
			if err := ts.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return metatable.ConvertToHumanReadableDateType(ts)
		}
	}
	return nil
}
