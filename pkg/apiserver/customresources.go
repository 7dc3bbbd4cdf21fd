package apiserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/version"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions/customresource"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// customResources are the routes of the custom resources the CRD
// controller has the server serve: one chi router per group version,
// built whenever what that group version serves changes, and published
// with every other as one immutable map. A request finds its router with
// one atomic load, after the built-in routes failed to match it (as kube
// hands the CRD handler what its own routes do not serve): built-in
// requests never wait on a lock, and no router changes while it serves.
type customResources struct {
	// mu serializes the writers.
	mu sync.Mutex
	// served is what each definition serves, by definition name.
	served map[string]*customresource.Served
	routes atomic.Pointer[customRoutes]
	// versions are the endpoints served by resource.
	versions atomic.Pointer[resourceVersions]
	// gvs are what discovery lists of the custom resources.
	gvs []*discovery.GroupVersion
}

// customRoutes is one published state of the routes.
type customRoutes struct {
	byGV   map[schema.GroupVersion]http.Handler
	groups map[string]bool
}

// serve serves r when a custom resource's router matches its group
// version, and reports whether it did.
func (c *customResources) serve(w http.ResponseWriter, r *http.Request) bool {
	routes := c.routes.Load()
	if routes == nil {
		return false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/apis/")
	if !ok {
		return false
	}
	group, rest, _ := strings.Cut(rest, "/")
	version, _, _ := strings.Cut(rest, "/")
	h := routes.byGV[schema.GroupVersion{Group: group, Version: version}]
	if h == nil {
		return false
	}
	// The router routes afresh: the built-in router's failed match is
	// no parent of this one.
	h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, chi.NewRouteContext())))
	return true
}

// servesGroup reports whether a custom resource is served in group.
func (c *customResources) servesGroup(group string) bool {
	routes := c.routes.Load()
	return routes != nil && routes.groups[group]
}

// ServeCustomResources serves what the definition name serves, in place
// of what it served before: its routes and discovery change at once.
func (s *Server) ServeCustomResources(name string, served *customresource.Served) error {
	c := &s.customResources
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.served == nil {
		c.served = map[string]*customresource.Served{}
	}
	affected := groupVersions(c.served[name])
	c.served[name] = served
	return s.publishCustomResourcesLocked(append(affected, groupVersions(served)...))
}

// RemoveCustomResources stops serving what the definition name serves.
func (s *Server) RemoveCustomResources(name string) {
	c := &s.customResources
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.served[name]
	if !ok {
		return
	}
	delete(c.served, name)
	// Removing routes cannot fail: only building them can.
	_ = s.publishCustomResourcesLocked(groupVersions(old))
}

func groupVersions(served *customresource.Served) []schema.GroupVersion {
	if served == nil {
		return nil
	}
	var out []schema.GroupVersion
	for _, v := range served.Group.PrioritizedVersions {
		out = append(out, schema.GroupVersion{Group: served.Group.GroupName, Version: v})
	}
	return out
}

// publishCustomResourcesLocked rebuilds the routers of the affected group
// versions and the discovery documents, and publishes both.
func (s *Server) publishCustomResourcesLocked(affected []schema.GroupVersion) error {
	c := &s.customResources
	next := &customRoutes{byGV: map[schema.GroupVersion]http.Handler{}, groups: map[string]bool{}}
	if cur := c.routes.Load(); cur != nil {
		next.byGV = maps.Clone(cur.byGV)
	}
	endpoints := map[schema.GroupVersion][]Endpoint{}
	versions := resourceVersions{}
	for _, gv := range c.servedGroupVersions() {
		e, err := groupVersionEndpoints(gv, c.storages(gv))
		if err != nil {
			return err
		}
		c.setWarnings(gv, e)
		endpoints[gv] = e
		for i := range e {
			versions.add(&e[i])
		}
		next.groups[gv.Group] = true
	}
	for _, gv := range affected {
		e, ok := endpoints[gv]
		if !ok {
			delete(next.byGV, gv)
			continue
		}
		next.byGV[gv] = s.customResourceRouter(gv, e)
	}
	crdGVs := c.discovery(endpoints)
	docs, err := s.buildDiscoveryLocked(crdGVs, s.remote)
	if err != nil {
		return fmt.Errorf("apiserver: discovery of custom resources: %w", err)
	}
	c.gvs = crdGVs
	c.routes.Store(next)
	c.versions.Store(&versions)
	s.discovery.Store(docs)
	s.openapi.SetCustomResources(c.openAPI())
	return nil
}

// setWarnings gives the endpoints of group version gv the deprecation
// warning of their definition's version, subresources included.
func (c *customResources) setWarnings(gv schema.GroupVersion, endpoints []Endpoint) {
	for _, served := range c.served {
		if served.Group.GroupName != gv.Group {
			continue
		}
		warning := served.DeprecationWarning(gv.Version)
		for i := range endpoints {
			if endpoints[i].Resource.Resource == served.Resource() {
				endpoints[i].Warning = warning
			}
		}
	}
}

// openAPI is what the OpenAPI documents say of the custom resources.
func (c *customResources) openAPI() []openapi.CustomResource {
	var out []openapi.CustomResource
	for _, served := range c.served {
		for _, d := range served.Descriptions() {
			out = append(out, openapi.CustomResource{
				Group: d.Group, Version: d.Version, Plural: d.Plural, Kind: d.Kind, ListKind: d.ListKind,
				Namespaced: d.Namespaced, Status: d.Status, Scale: d.Scale,
				KindDefinition: d.KindDefinition, ListDefinition: d.ListDefinition, V2: d.V2, V3: d.V3,
			})
		}
	}
	return out
}

// servedGroupVersions lists the group versions served, groups sorted by
// name and each group's versions by kube's version priority, as kube
// lists the groups of custom resources.
func (c *customResources) servedGroupVersions() []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, served := range c.served {
		for _, gv := range groupVersions(served) {
			if !seen[gv] {
				seen[gv] = true
				out = append(out, gv)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return utilversion.CompareKubeAwareVersionStrings(out[i].Version, out[j].Version) > 0
	})
	return out
}

// storages are the storages served at gv, of every definition.
func (c *customResources) storages(gv schema.GroupVersion) map[string]rest.Storage {
	out := map[string]rest.Storage{}
	for _, served := range c.served {
		if served.Group.GroupName == gv.Group {
			maps.Copy(out, served.Group.VersionedResourcesStorageMap[gv.Version])
		}
	}
	return out
}

// customResourceRouter routes the endpoints of a group version of custom
// resources, negotiated as kube's CRD handler negotiates.
func (s *Server) customResourceRouter(gv schema.GroupVersion, endpoints []Endpoint) http.Handler {
	r := chi.NewRouter()
	r.NotFound(handlers.NotFound)
	r.MethodNotAllowed(handlers.MethodNotAllowed)
	prefix := "/apis/" + gv.String()
	for i := range endpoints {
		sc := s.scope(&endpoints[i])
		sc.MediaTypes = negotiation.CustomResources
		s.installEndpoint(r, prefix, sc, endpoints[i].Warning)
	}
	return r
}

// customResourceVerbs are the verbs kube's discovery lists for a custom
// resource (in its order), and for one whose definition is being
// deleted.
var (
	customResourceVerbs            = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	terminatingCustomResourceVerbs = []string{"delete", "deletecollection", "get", "list", "watch"}
	customSubresourceVerbs         = []string{"get", "patch", "update"}
)

// discovery is what discovery lists of the custom resources: the
// entries kube's CRD discovery makes, in its order (by resource: the
// resource, its status, its scale).
func (c *customResources) discovery(endpoints map[schema.GroupVersion][]Endpoint) []*discovery.GroupVersion {
	terminating := map[string]bool{}
	for _, served := range c.served {
		if served.Terminating() {
			terminating[served.Group.GroupName+"/"+served.Resource()] = true
		}
	}
	subresourceOrder := map[string]int{"": 0, "status": 1, "scale": 2}
	var out []*discovery.GroupVersion
	for _, gv := range c.servedGroupVersions() {
		list := slices.Clone(endpoints[gv])
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Resource.Resource != list[j].Resource.Resource {
				return list[i].Resource.Resource < list[j].Resource.Resource
			}
			return subresourceOrder[list[i].Subresource] < subresourceOrder[list[j].Subresource]
		})
		dgv := &discovery.GroupVersion{Group: gv.Group, Version: gv.Version, CustomResources: true}
		for i := range list {
			e := &list[i]
			res := apiResource(e)
			res.Verbs = customSubresourceVerbs
			if e.Subresource == "" {
				res.Verbs = customResourceVerbs
				if terminating[gv.Group+"/"+e.Path] {
					res.Verbs = terminatingCustomResourceVerbs
				}
			}
			dgv.Resources = append(dgv.Resources, res)
		}
		out = append(out, dgv)
	}
	return out
}
