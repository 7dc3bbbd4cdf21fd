package apiserver

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// installAPIGroups mounts every resource of every group on r and returns
// what discovery lists.
func (s *Server) installAPIGroups(r chi.Router, groups []rest.APIGroupInfo) ([]*discovery.GroupVersion, error) {
	all, err := Endpoints(groups)
	if err != nil {
		return nil, err
	}
	gvs := make([]*discovery.GroupVersion, 0, len(all))
	s.builtinVersions = resourceVersions{}
	for _, g := range all {
		gv := g.GroupVersion
		prefix := "/apis/" + gv.String()
		if gv.Group == "" {
			prefix = "/api/" + gv.Version
		}
		dgv := &discovery.GroupVersion{Group: gv.Group, Version: gv.Version}
		for i := range g.Endpoints {
			e := &g.Endpoints[i]
			s.installEndpoint(r, prefix, s.scope(e), "")
			s.builtinVersions.add(e)
			dgv.Resources = append(dgv.Resources, apiResource(e))
		}
		gvs = append(gvs, dgv)
	}
	s.builtinShared = s.builtinVersions.sharedStorage()
	return gvs, nil
}

// scope is what the handlers of e need.
func (s *Server) scope(e *Endpoint) *handlers.Scope {
	return &handlers.Scope{
		Resource:          e.Resource,
		Subresource:       e.Subresource,
		Kind:              e.Kind,
		Namespaced:        e.Namespaced,
		Storage:           e.Storage,
		Admission:         s.admission,
		MinRequestTimeout: s.minRequestTimeout,
		Metrics:           s.handlerMetrics,
	}
}

// apiResource is the discovery entry of the endpoint.
func apiResource(e *Endpoint) metav1.APIResource {
	res := metav1.APIResource{Name: e.Path, Namespaced: e.Namespaced, Kind: e.Kind.Kind, Verbs: e.Verbs}
	if e.Kind.GroupVersion() != e.Resource.GroupVersion() {
		res.Group, res.Version = e.Kind.Group, e.Kind.Version
	}
	if e.Subresource != "" {
		return res
	}
	if p, ok := e.Storage.(rest.SingularNameProvider); ok {
		res.SingularName = p.GetSingularName()
	}
	if p, ok := e.Storage.(rest.ShortNamesProvider); ok {
		res.ShortNames = p.ShortNames()
	}
	if p, ok := e.Storage.(rest.CategoriesProvider); ok {
		res.Categories = p.Categories()
	}
	if _, ok := e.Storage.(rest.Watcher); ok {
		// A resource kept in storage (every store watches) has a hash;
		// one computed on each read (componentstatuses) has none, as in
		// kube. Every version of a resource names the kind it is stored as.
		stored := e.Kind
		if p, ok := e.Storage.(rest.StorageVersionProvider); ok {
			stored = p.StorageVersion()
		}
		res.StorageVersionHash = discovery.StorageVersionHash(stored.Group, stored.Version, stored.Kind)
	}
	return res
}

// installEndpoint mounts the routes of one endpoint under prefix; every
// answer carries warning, or kube's warning of a deprecated kind.
func (s *Server) installEndpoint(r chi.Router, prefix string, sc *handlers.Scope, warning string) {
	resource := sc.Resource.Resource
	var collection, item string
	if sc.Namespaced {
		collection = prefix + "/namespaces/{namespace}/" + resource
	} else {
		collection = prefix + "/" + resource
	}
	item = collection + "/{name}"
	// As kube: a deprecated kind warns on every request to its endpoint.
	if warning == "" {
		warning = handlers.DeprecationWarning(sc.Storage.New(), sc.Kind, s.apiMajor, s.apiMinor)
	}
	handle := func(method, path, verb string, h http.Handler) {
		h = s.instrument(sc, handlers.WithWarning(h, warning))
		// What a connect subresource consumes and produces is its
		// backend's business; custom resources negotiate their own.
		if verb != "connect" && (sc.MediaTypes == nil || sc.MediaTypes.Routed()) {
			produces := negotiation.ProducesResource
			if verb == "list" || verb == "watch" {
				produces = negotiation.ProducesStreaming
			}
			var consumes []string
			if verb == "patch" {
				// kube's PATCH routes consume the patch types alone:
				// anything else is the router's 415, before the handler.
				consumes = negotiation.Builtin.PatchTypes()
			}
			h = routeChecks(consumes, produces, h)
		}
		r.Method(method, path, h)
	}
	if sc.Subresource != "" {
		path := item + "/" + sc.Subresource
		if c, ok := sc.Storage.(rest.Connecter); ok {
			_, subpath, _ := c.NewConnectOptions()
			for _, method := range c.ConnectMethods() {
				handle(method, path, "connect", sc.Connect(c))
				if subpath {
					handle(method, path+"/*", "connect", sc.Connect(c))
				}
			}
			return
		}
		if g, ok := sc.Storage.(rest.GetterWithOptions); ok {
			handle(http.MethodGet, path, "connect", sc.GetWithOptions(g))
			return
		}
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
func routeChecks(consumes []string, produces negotiation.Produces, h http.Handler) http.Handler {
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
