package main

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// definitionNamer gives each definition the x-kubernetes-group-version-kind
// of the kinds the scheme registers its Go type as.
type definitionNamer struct {
	gvks map[string][]map[string]interface{}
}

func newDefinitionNamer(s *runtime.Scheme) (*definitionNamer, error) {
	type gvk struct{ group, version, kind string }
	byName := map[string][]gvk{}
	for k := range s.AllKnownTypes() {
		if k.Group == metav1.GroupName {
			// Registered for decoding only: kube's documents name no
			// kind of meta.k8s.io.
			continue
		}
		name, err := s.ToOpenAPIDefinitionName(k)
		if err != nil {
			return nil, err
		}
		byName[name] = append(byName[name], gvk{k.Group, k.Version, k.Kind})
	}
	n := &definitionNamer{gvks: map[string][]map[string]interface{}{}}
	for name, list := range byName {
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if a.group != b.group {
				return a.group < b.group
			}
			if a.version != b.version {
				return a.version < b.version
			}
			return a.kind < b.kind
		})
		for _, k := range list {
			n.gvks[name] = append(n.gvks[name], map[string]interface{}{"group": k.group, "version": k.version, "kind": k.kind})
		}
	}
	return n, nil
}

// name implements common.Config's GetDefinitionName.
func (n *definitionNamer) name(name string) (string, spec.Extensions) {
	list, ok := n.gvks[name]
	if !ok {
		return name, nil
	}
	// A fresh copy per definition: documents are post-processed in place.
	out := make([]interface{}, len(list))
	for i, m := range list {
		c := map[string]interface{}{}
		for k, v := range m {
			c[k] = v
		}
		out[i] = c
	}
	return name, spec.Extensions{"x-kubernetes-group-version-kind": out}
}

// crossRegisteredKinds are the meta kinds registered into every group
// version (metav1.AddToGroupVersion); a v3 document lists them only for
// its own group version and core/v1, as kube-apiserver does.
var crossRegisteredKinds = map[string]bool{"WatchEvent": true, "DeleteOptions": true}

func filterScopedGVKs(doc *spec3.OpenAPI, group, version string) {
	for _, s := range doc.Components.Schemas {
		list, ok := s.Extensions["x-kubernetes-group-version-kind"].([]interface{})
		if !ok || len(list) <= 1 {
			continue
		}
		if first, _ := list[0].(map[string]interface{}); !crossRegisteredKinds[fmt.Sprint(first["kind"])] {
			continue
		}
		var kept []interface{}
		for _, item := range list {
			m := item.(map[string]interface{})
			if g, v := m["group"], m["version"]; (g == group && v == version) || (g == "" && v == "v1") {
				kept = append(kept, item)
			}
		}
		if len(kept) > 0 {
			s.Extensions["x-kubernetes-group-version-kind"] = kept
		} else {
			delete(s.Extensions, "x-kubernetes-group-version-kind")
		}
	}
}
