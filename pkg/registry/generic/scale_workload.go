package generic

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// WorkloadScale is the ScaleAccessor of a kind shaped like kube's
// workloads: spec.replicas (*int32; none reads as 0), status.replicas
// (int32), and spec.selector selecting its pods, as a label selector
// (apps) or a map of labels (replication controllers). versions are the
// API versions ("apps/v1beta2") whose managers own spec.replicas in an
// object's managed fields, as kube's scale subresource knows them (none:
// the served version only).
//
// It panics when T is not so shaped: a mistake of the declaration, met as
// soon as its package loads.
func WorkloadScale[T runtime.Object](versions ...string) *ScaleAccessor {
	shape, err := workloadShapeOf(reflect.TypeFor[T]())
	if err != nil {
		panic(fmt.Sprintf("generic: WorkloadScale of %v: %v", reflect.TypeFor[T](), err))
	}
	var paths managedfields.ResourcePathMappings
	if len(versions) > 0 {
		paths = managedfields.ResourcePathMappings{}
		for _, v := range versions {
			paths[v] = fieldpath.MakePathOrDie("spec", "replicas")
		}
	}
	return &ScaleAccessor{
		Replicas: func(obj runtime.Object) (int32, int32, string, error) {
			v := reflect.ValueOf(obj).Elem()
			spec := v.FieldByIndex(shape.specReplicas).Interface().(*int32)
			status := int32(v.FieldByIndex(shape.statusReplicas).Int())
			selector, err := selectorString(v.FieldByIndex(shape.specSelector).Interface())
			if spec == nil {
				return 0, status, selector, err
			}
			return *spec, status, selector, err
		},
		SetReplicas: func(obj runtime.Object, replicas int32) {
			reflect.ValueOf(obj).Elem().FieldByIndex(shape.specReplicas).Set(reflect.ValueOf(&replicas))
		},
		ReplicasPaths: paths,
	}
}

// workloadShape is where a workload kind keeps what its scale shows.
type workloadShape struct {
	// The indexes of the fields (reflect.Value.FieldByIndex).
	specReplicas, statusReplicas, specSelector []int
}

func workloadShapeOf(t reflect.Type) (workloadShape, error) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return workloadShape{}, fmt.Errorf("not a pointer to a struct")
	}
	t = t.Elem()
	field := func(path string, want ...reflect.Type) ([]int, error) {
		var index []int
		cur := t
		for _, name := range strings.Split(path, ".") {
			f, ok := cur.FieldByName(name)
			if !ok {
				return nil, fmt.Errorf("no field %s", path)
			}
			index, cur = append(index, f.Index...), f.Type
		}
		if !slices.Contains(want, cur) {
			return nil, fmt.Errorf("%s is a %v, want one of %v", path, cur, want)
		}
		return index, nil
	}
	var shape workloadShape
	var err error
	if shape.specReplicas, err = field("Spec.Replicas", reflect.TypeFor[*int32]()); err != nil {
		return shape, err
	}
	if shape.statusReplicas, err = field("Status.Replicas", reflect.TypeFor[int32]()); err != nil {
		return shape, err
	}
	labelSelector, labelMap := reflect.TypeFor[*metav1.LabelSelector](), reflect.TypeFor[map[string]string]()
	if shape.specSelector, err = field("Spec.Selector", labelSelector, labelMap); err != nil {
		return shape, err
	}
	return shape, nil
}

// selectorString renders a workload's spec.selector as the Scale shows
// it.
func selectorString(selector any) (string, error) {
	switch s := selector.(type) {
	case *metav1.LabelSelector:
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return "", err
		}
		return sel.String(), nil
	case map[string]string:
		return labels.SelectorFromSet(s).String(), nil
	}
	return "", fmt.Errorf("not a selector: %T", selector)
}
