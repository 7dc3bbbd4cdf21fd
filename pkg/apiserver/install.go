package apiserver

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// endpoint is one resource or subresource of one group version, with the
// verbs its storage offers.
type endpoint struct {
	scope *handlers.Scope
	path  string // "pods" or "pods/status"
	verbs []string
}

// installAPIGroups mounts every resource of every group on r and returns
// what discovery lists.
func (s *Server) installAPIGroups(r chi.Router, groups []rest.APIGroupInfo) ([]*discovery.GroupVersion, error) {
	var gvs []*discovery.GroupVersion
	for i := range groups {
		g := &groups[i]
		for _, version := range g.PrioritizedVersions {
			gv := schema.GroupVersion{Group: g.GroupName, Version: version}
			endpoints, err := s.endpoints(gv, g.VersionedResourcesStorageMap[version])
			if err != nil {
				return nil, err
			}
			prefix := "/apis/" + gv.String()
			if gv.Group == "" {
				prefix = "/api/" + version
			}
			dgv := &discovery.GroupVersion{Group: gv.Group, Version: version}
			for _, e := range endpoints {
				s.installEndpoint(r, prefix, e)
				dgv.Resources = append(dgv.Resources, e.apiResource())
			}
			gvs = append(gvs, dgv)
		}
	}
	return gvs, nil
}

// endpoints builds the scope of each path of a group version, sorted so
// that resources come before their subresources.
func (s *Server) endpoints(gv schema.GroupVersion, storages map[string]rest.Storage) ([]*endpoint, error) {
	paths := make([]string, 0, len(storages))
	for p := range storages {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []*endpoint
	for _, p := range paths {
		st := storages[p]
		resource, sub, _ := strings.Cut(p, "/")
		main, ok := storages[resource]
		if !ok {
			return nil, fmt.Errorf("apiserver: %s/%s has no main resource %q", gv, p, resource)
		}
		scoper, ok := main.(rest.Scoper)
		if !ok {
			return nil, fmt.Errorf("apiserver: %s/%s does not say its scope", gv, resource)
		}
		kind, err := kindOf(gv, st)
		if err != nil {
			return nil, fmt.Errorf("apiserver: %s/%s: %w", gv, p, err)
		}
		e := &endpoint{
			path: p,
			scope: &handlers.Scope{
				Resource:          gv.WithResource(resource),
				Subresource:       sub,
				Kind:              kind,
				Namespaced:        scoper.NamespaceScoped(),
				Storage:           st,
				Admission:         s.admission,
				MinRequestTimeout: s.minRequestTimeout,
			},
			verbs: verbsOf(st, sub != ""),
		}
		out = append(out, e)
	}
	return out, nil
}

// kindOf is the kind a storage serves: its own say, or the registered kind
// of the Go type it makes.
func kindOf(gv schema.GroupVersion, st rest.Storage) (schema.GroupVersionKind, error) {
	if p, ok := st.(rest.GroupVersionKindProvider); ok {
		return p.GroupVersionKind(gv), nil
	}
	kinds, _, err := api.Scheme.ObjectKinds(st.New())
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	for _, k := range kinds {
		if k.GroupVersion() == gv {
			return k, nil
		}
	}
	return kinds[0], nil
}

// verbsOf lists the verbs a storage implements, in discovery's order.
func verbsOf(st rest.Storage, subresource bool) []string {
	var verbs []string
	add := func(ok bool, verb string) {
		if ok {
			verbs = append(verbs, verb)
		}
	}
	_, creater := st.(rest.Creater)
	_, deleter := st.(rest.GracefulDeleter)
	_, collectionDeleter := st.(rest.CollectionDeleter)
	_, getter := st.(rest.Getter)
	_, lister := st.(rest.Lister)
	_, updater := st.(rest.Updater)
	_, watcher := st.(rest.Watcher)
	add(creater, "create")
	add(deleter, "delete")
	add(collectionDeleter && !subresource, "deletecollection")
	add(getter, "get")
	add(lister && !subresource, "list")
	add(updater && getter, "patch") // kube's rest.Patcher is a Getter and an Updater
	add(updater, "update")
	add(watcher && !subresource, "watch")
	return verbs
}

// apiResource is the discovery entry of the endpoint.
func (e *endpoint) apiResource() metav1.APIResource {
	sc := e.scope
	res := metav1.APIResource{Name: e.path, Namespaced: sc.Namespaced, Kind: sc.Kind.Kind, Verbs: e.verbs}
	if sc.Kind.GroupVersion() != sc.Resource.GroupVersion() {
		res.Group, res.Version = sc.Kind.Group, sc.Kind.Version
	}
	if sc.Subresource != "" {
		return res
	}
	if p, ok := sc.Storage.(rest.SingularNameProvider); ok {
		res.SingularName = p.GetSingularName()
	}
	if p, ok := sc.Storage.(rest.ShortNamesProvider); ok {
		res.ShortNames = p.ShortNames()
	}
	if p, ok := sc.Storage.(rest.CategoriesProvider); ok {
		res.Categories = p.Categories()
	}
	if _, ok := sc.Storage.(rest.Lister); ok {
		res.StorageVersionHash = discovery.StorageVersionHash(sc.Kind.Group, sc.Kind.Version, sc.Kind.Kind)
	}
	return res
}

// installEndpoint mounts the routes of one endpoint under prefix.
func (s *Server) installEndpoint(r chi.Router, prefix string, e *endpoint) {
	sc := e.scope
	resource := sc.Resource.Resource
	var collection, item string
	if sc.Namespaced {
		collection = prefix + "/namespaces/{namespace}/" + resource
	} else {
		collection = prefix + "/" + resource
	}
	item = collection + "/{name}"
	// As kube: a deprecated kind warns on every request to its endpoint.
	warning := handlers.DeprecationWarning(sc.Storage.New(), sc.Kind, s.apiMajor, s.apiMinor)
	handle := func(method, path, verb string, h http.Handler) {
		produces := negotiation.ResourceMediaTypes
		if verb == "list" || verb == "watch" {
			produces = negotiation.StreamingMediaTypes
		}
		var consumes []string
		if verb == "patch" {
			consumes = handlers.PatchRouteMediaTypes
		}
		r.Method(method, path, routeChecks(consumes, produces, s.instrument(sc, verb, handlers.WithWarning(h, warning))))
	}
	if sc.Subresource != "" {
		path := item + "/" + sc.Subresource
		if g, ok := sc.Storage.(rest.Getter); ok {
			handle(http.MethodGet, path, "get", sc.Get(g))
		}
		if u, ok := sc.Storage.(rest.Updater); ok {
			handle(http.MethodPut, path, "update", sc.Update(u))
			if _, getter := sc.Storage.(rest.Getter); getter {
				handle(http.MethodPatch, path, "patch", sc.Patch(u))
			}
		}
		if c, ok := sc.Storage.(rest.Creater); ok {
			handle(http.MethodPost, path, "create", sc.Create(c))
		}
		return
	}
	if l, ok := sc.Storage.(rest.Lister); ok {
		handle(http.MethodGet, collection, "list", sc.List(l))
		if sc.Namespaced {
			// Every namespace at once.
			handle(http.MethodGet, prefix+"/"+resource, "list", sc.List(l))
		}
	}
	if w, ok := sc.Storage.(rest.Watcher); ok {
		// kube's legacy watch paths: /watch/... without ?watch=true.
		watchPrefix := strings.Replace(collection, prefix, prefix+"/watch", 1)
		handle(http.MethodGet, watchPrefix, "watch", sc.Watch(w, false))
		handle(http.MethodGet, watchPrefix+"/{name}", "watch", sc.Watch(w, true))
		if sc.Namespaced {
			handle(http.MethodGet, prefix+"/watch/"+resource, "watch", sc.Watch(w, false))
		}
	}
	if c, ok := sc.Storage.(rest.Creater); ok {
		handle(http.MethodPost, collection, "create", sc.Create(c))
	}
	if d, ok := sc.Storage.(rest.CollectionDeleter); ok {
		handle(http.MethodDelete, collection, "deletecollection", sc.DeleteCollection(d))
	}
	if g, ok := sc.Storage.(rest.Getter); ok {
		handle(http.MethodGet, item, "get", sc.Get(g))
	}
	if u, ok := sc.Storage.(rest.Updater); ok {
		handle(http.MethodPut, item, "update", sc.Update(u))
		if _, getter := sc.Storage.(rest.Getter); getter {
			handle(http.MethodPatch, item, "patch", sc.Patch(u))
		}
	}
	if d, ok := sc.Storage.(rest.GracefulDeleter); ok {
		handle(http.MethodDelete, item, "delete", sc.Delete(d))
	}
}

// routeChecks refuses, before the handler runs and as kube's router does,
// a request whose Content-Type the route does not consume (when it
// declares what it consumes) or whose Accept names nothing it produces.
func routeChecks(consumes, produces []string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if consumes != nil {
			if err := negotiation.CheckContentType(r, consumes); err != nil {
				handlers.WriteError(w, r, err)
				return
			}
		}
		if err := negotiation.CheckAccept(r, produces); err != nil {
			handlers.WriteError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}
