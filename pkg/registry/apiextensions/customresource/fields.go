package customresource

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// attrs returns an object's labels and selectable fields: its name (and
// namespace), and the selectableFields of every version, by the path
// each names (".spec.color" selects as "spec.color"), the empty string
// where the object has no value.
//
// The Store keeps objects at the storage version; a version's path is
// read there, which is where conversion None keeps every field.
func (r *resource) attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	set := fields.Set{"metadata.name": m.GetName()}
	if r.namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	u, ok := obj.(runtime.Unstructured)
	if !ok {
		return nil, nil, fmt.Errorf("customresource: %T is not unstructured", obj)
	}
	content := u.UnstructuredContent()
	for name, p := range r.selectable {
		results, err := p.FindResults(content)
		if err != nil {
			return nil, nil, fmt.Errorf("selectable field %s: %w", name, err)
		}
		set[name] = ""
		if len(results) > 0 && len(results[0]) > 0 {
			if len(results) > 1 || len(results[0]) > 1 {
				return nil, nil, fmt.Errorf("selectable field %s: more than one value", name)
			}
			if v := results[0][0].Interface(); v != nil {
				set[name] = fmt.Sprint(v)
			}
		}
	}
	return m.GetLabels(), set, nil
}

// prepareSelectable parses the selectable fields of every version.
func (r *resource) prepareSelectable() error {
	r.selectable = map[string]*jsonpath.JSONPath{}
	for _, v := range r.versions {
		for _, sf := range v.def.SelectableFields {
			name := strings.TrimPrefix(sf.JSONPath, ".")
			if _, ok := r.selectable[name]; ok {
				continue
			}
			p := jsonpath.New("selectableField")
			p.AllowMissingKeys(true)
			if err := p.Parse("{" + sf.JSONPath + "}"); err != nil {
				return fmt.Errorf("selectable field %s: %w", sf.JSONPath, err)
			}
			r.selectable[name] = p
		}
	}
	return nil
}

// fieldLabels is what a field selector may name at version v: the name,
// the namespace of a namespaced kind, and v's selectable fields; anything
// else is refused in kube's words.
func (r *resource) fieldLabels(v *version) generic.FieldLabelConversionFunc {
	allowed := map[string]bool{"metadata.name": true}
	if r.namespaced {
		allowed["metadata.namespace"] = true
	}
	for _, sf := range v.def.SelectableFields {
		allowed[strings.TrimPrefix(sf.JSONPath, ".")] = true
	}
	return func(label, value string) (string, string, error) {
		if !allowed[label] {
			return "", "", fmt.Errorf("field label not supported: %s", label)
		}
		return label, value, nil
	}
}
