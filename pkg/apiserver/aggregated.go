package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/aggregator"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi"
)

// withAggregator serves the requests of the group versions of extension
// API servers by proxy, before the server's own routes, as kube's
// aggregator sits in front of kube-apiserver: the filters (authentication,
// authorization, limits, audit) have run, here as there.
func (s *Server) withAggregator(routes http.Handler) http.Handler {
	if s.aggregator == nil {
		return routes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.aggregator.Serve(w, r) {
			routes.ServeHTTP(w, r)
		}
	})
}

// ServeAPIServices serves list, every APIService there is: the group
// versions of those naming a service are proxied to their servers
// (when Available) and listed in discovery with the resources list says;
// those of the others are the server's own and served as they were.
func (s *Server) ServeAPIServices(list []aggregator.Remote) error {
	if s.aggregator == nil {
		return errors.New("apiserver: the server was built without the aggregation layer")
	}
	c := &s.customResources
	c.mu.Lock()
	defer c.mu.Unlock()
	list = slices.Clone(list)
	docs, err := s.buildDiscoveryLocked(c.gvs, list)
	if err != nil {
		return fmt.Errorf("apiserver: discovery of extension API servers: %w", err)
	}
	s.aggregator.SetAPIServices(list)
	s.remote = list
	s.discovery.Store(docs)
	var docsOf []openapi.Remote
	for _, r := range list {
		if spec := r.APIService.Spec; spec.Service != nil && (r.OpenAPIV2 != nil || r.OpenAPIV3 != nil) {
			docsOf = append(docsOf, openapi.Remote{Group: spec.Group, Version: spec.Version, V2: r.OpenAPIV2, V3: r.OpenAPIV3})
		}
	}
	s.openapi.SetRemote(docsOf)
	return nil
}

// buildDiscoveryLocked builds the discovery documents of the built-in
// group versions, those of custom resources and those of extension API
// servers (customResources.mu held).
func (s *Server) buildDiscoveryLocked(crdGVs []*discovery.GroupVersion, remote []aggregator.Remote) (*discovery.Documents, error) {
	gvs := append(slices.Clone(s.builtinGVs), crdGVs...)
	return discovery.New(aggregator.Discovery(gvs, remote))
}

// servesRemoteGroup reports whether an extension API server serves group.
func (s *Server) servesRemoteGroup(group string) bool {
	return s.discovery.Load().APIGroup(group) != nil && !s.builtinGroups[group] && !s.customResources.servesGroup(group)
}
