package apiserver

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
)

// RESTMappings implements admission.KindMapper: the main resources that
// serve kind gk at version, built-in or custom (what discovery lists of
// this server's own), or kube's NoKindMatchError.
func (s *Server) RESTMappings(gk schema.GroupKind, version string) ([]admission.RESTMapping, error) {
	kind := gk.WithVersion(version)
	out := kindMappings(s.builtinVersions, kind)
	if len(out) == 0 {
		if custom := s.customResources.versions.Load(); custom != nil {
			out = kindMappings(*custom, kind)
		}
	}
	if len(out) == 0 {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: []string{version}}
	}
	return out, nil
}

func kindMappings(rv resourceVersions, kind schema.GroupVersionKind) []admission.RESTMapping {
	var out []admission.RESTMapping
	for k, endpoints := range rv {
		if k.subresource != "" || k.group != kind.Group {
			continue
		}
		for _, e := range endpoints {
			if e.Kind == kind {
				out = append(out, admission.RESTMapping{Resource: e.Resource, Namespaced: e.Namespaced})
			}
		}
	}
	return out
}
