package workload

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// MainStrategy is the strategy of a workload's main endpoint: a type
// embedding Strategy, with the kind's defaults (every workload has some).
type MainStrategy interface {
	generic.Strategy
	rest.Defaulter
	APIVersion() string
}

// Kind declares a workload resource whose objects are T and lists L
// (pointers: *appsv1.Deployment, *appsv1.DeploymentList): what differs
// between the workloads. Declare makes it a generic.Resource; what they
// share it adds: the names, which follow T's type name as every workload
// kind's do (Kind "Deployment", resource "deployments"), the namespaced
// scope, the "all" category, a /status over the main strategy, and the
// table's name, age, containers, images and selector columns.
type Kind[T, L runtime.Object] struct {
	// ShortName is kubectl's short name ("deploy"); "" for none.
	ShortName string
	Strategy  MainStrategy
	// Status is the /status strategy without its Main and GroupVersion,
	// which Declare takes from Strategy: what the kind validates, keeps
	// and warns about there.
	Status generic.StatusStrategy
	// Scale serves /scale when set (generic.WorkloadScale).
	Scale                *generic.ScaleAccessor
	AttrFunc             storage.AttrFunc
	FieldLabelConversion generic.FieldLabelConversionFunc
	Table                Table[T]
}

// Table is what a workload prints of its own: Columns between NAME and
// AGE, filled by Cells, then the containers and images of Template (a nil
// func or template: none) and the Selector, whose column is there when
// SelectorDoc is not empty.
type Table[T runtime.Object] struct {
	Columns     []metav1.TableColumnDefinition
	Cells       func(T) []interface{}
	Template    func(T) *corev1.PodTemplateSpec
	SelectorDoc string
	Selector    func(T) string
}

// Declare returns the Resource of a workload kind.
func Declare[T, L runtime.Object](k Kind[T, L]) generic.Resource {
	status := k.Status
	status.Main, status.GroupVersion = k.Strategy, k.Strategy.APIVersion()
	kind := reflect.TypeFor[T]().Elem().Name()
	r := generic.Resource{
		Name: strings.ToLower(kind) + "s", Singular: strings.ToLower(kind), Kind: kind, Namespaced: true,
		Categories:           []string{"all"},
		New:                  newOf[T](),
		NewList:              newOf[L](),
		Strategy:             k.Strategy,
		StatusStrategy:       status,
		Scale:                k.Scale,
		AttrFunc:             k.AttrFunc,
		FieldLabelConversion: k.FieldLabelConversion,
		Table:                k.Table.printer(),
	}
	if k.ShortName != "" {
		r.ShortNames = []string{k.ShortName}
	}
	return r
}

// newOf returns a func making new T, a pointer to a struct, as a
// scheme does (reflect.New).
func newOf[T runtime.Object]() func() runtime.Object {
	elem := reflect.TypeFor[T]().Elem()
	return func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) }
}

func (t Table[T]) printer() generic.TablePrinter {
	return generic.TablePrinter{
		Columns: podspec.WorkloadColumns(t.SelectorDoc, t.Columns),
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			o := obj.(T)
			var containers []corev1.Container
			if t.Template != nil {
				if template := t.Template(o); template != nil {
					containers = template.Spec.Containers
				}
			}
			names, images := podspec.ContainerCells(containers)
			m := obj.(metav1.Object)
			cells := []interface{}{m.GetName()}
			if t.Cells != nil {
				cells = append(cells, t.Cells(o)...)
			}
			cells = append(cells, generic.TranslateTimestampSince(m.GetCreationTimestamp()), names, images)
			if t.SelectorDoc != "" {
				cells = append(cells, t.Selector(o))
			}
			return cells, nil
		},
	}
}
