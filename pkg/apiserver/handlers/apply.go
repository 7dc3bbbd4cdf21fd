package handlers

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// applyConfiguration is server-side apply: the patch is the manager's
// whole intent for the object (an apply configuration, in YAML or JSON),
// merged into current by the field manager, which refuses (409) to
// change fields other managers own unless forced. current is a new
// object when the apply creates it.
func (p *patcher) applyConfiguration(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	config := &unstructured.Unstructured{Object: map[string]interface{}{}}
	if err := yaml.Unmarshal(p.patch, &config.Object); err != nil {
		return nil, badRequest("error decoding patch: %v", err)
	}
	fm, err := p.scope.fieldManager()
	if err != nil {
		return nil, err
	}
	var obj runtime.Object
	runDeep(func() { obj, err = fm.Apply(current, config, p.manager, p.force) })
	if err != nil {
		return nil, err
	}
	// As kube, duplicate fields are looked for once the apply succeeded
	// (unknown fields already failed it: the schema has no place for
	// them).
	if p.checksFields() {
		if err := yaml.UnmarshalStrict(p.patch, &map[string]interface{}{}); err != nil {
			if p.fieldValidation == fieldValidationStrict {
				return nil, badRequest("error strict decoding patch: %v", err)
			}
			for _, w := range yamlWarnings(err.Error()) {
				request.AddWarning(ctx, w)
			}
		}
	}
	return obj, nil
}

// yamlWarnings splits the error of strict YAML decoding into one warning
// per problem, as kube words them ("line 7: key \"a\" already set in
// map"); another error is one warning.
func yamlWarnings(msg string) []string {
	trimmed := ""
	for _, prefix := range []string{"yaml: unmarshal errors:\n", "error converting YAML to JSON: yaml: unmarshal errors:\n"} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			trimmed = rest
			break
		}
	}
	if trimmed == "" {
		return []string{msg}
	}
	lines := strings.Split(trimmed, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return lines
}
