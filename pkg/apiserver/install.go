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
	// As kube: a deprecated kind warns on every request to its endpoint.
	if warning == "" {
		warning = handlers.DeprecationWarning(sc.Storage.New(), sc.Kind, s.apiMajor, s.apiMinor)
	}
	m := &mounter{s: s, r: r, sc: sc, warning: warning}
	collection := prefix + "/" + sc.Resource.Resource
	if sc.Namespaced {
		collection = prefix + "/namespaces/{namespace}/" + sc.Resource.Resource
	}
	item := collection + "/{name}"
	if sc.Subresource != "" {
		m.subresource(item + "/" + sc.Subresource)
		return
	}
	m.listAndWatch(prefix, collection)
	if c, ok := sc.Storage.(rest.Creater); ok {
		m.handle(http.MethodPost, collection, "create", sc.Create(c))
	}
	if d, ok := sc.Storage.(rest.CollectionDeleter); ok {
		m.handle(http.MethodDelete, collection, "deletecollection", sc.DeleteCollection(d))
	}
	m.readWrite(item)
	if d, ok := sc.Storage.(rest.GracefulDeleter); ok {
		m.handle(http.MethodDelete, item, "delete", sc.Delete(d))
	}
}

// mounter mounts the handlers of one endpoint's scope on a router.
type mounter struct {
	s       *Server
	r       chi.Router
	sc      *handlers.Scope
	warning string
}

// handle mounts h for method and path, instrumented, with the endpoint's
// warning and the router's checks of what verb consumes and produces.
func (m *mounter) handle(method, path, verb string, h http.Handler) {
	h = m.s.instrument(m.sc, handlers.WithWarning(h, m.warning))
	// What a connect subresource consumes and produces is its
	// backend's business; custom resources negotiate their own.
	if verb != "connect" && (m.sc.MediaTypes == nil || m.sc.MediaTypes.Routed()) {
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
	m.r.Method(method, path, h)
}

// subresource mounts a subresource at path: a connecter's methods, a
// getter with options, or the verbs of an ordinary object.
func (m *mounter) subresource(path string) {
	sc := m.sc
	if c, ok := sc.Storage.(rest.Connecter); ok {
		_, subpath, _ := c.NewConnectOptions()
		for _, method := range c.ConnectMethods() {
			m.handle(method, path, "connect", sc.Connect(c))
			if subpath {
				m.handle(method, path+"/*", "connect", sc.Connect(c))
			}
		}
		return
	}
	if g, ok := sc.Storage.(rest.GetterWithOptions); ok {
		m.handle(http.MethodGet, path, "connect", sc.GetWithOptions(g))
		return
	}
	m.readWrite(path)
	if c, ok := sc.Storage.(rest.Creater); ok {
		m.handle(http.MethodPost, path, "create", sc.Create(c))
	}
}

// listAndWatch mounts list and watch on the collection, and for a namespaced
// resource on every namespace at once; kube's legacy /watch/... paths watch
// without ?watch=true.
func (m *mounter) listAndWatch(prefix, collection string) {
	sc := m.sc
	if l, ok := sc.Storage.(rest.Lister); ok {
		m.handle(http.MethodGet, collection, "list", sc.List(l))
		if sc.Namespaced {
			m.handle(http.MethodGet, prefix+"/"+sc.Resource.Resource, "list", sc.List(l))
		}
	}
	if w, ok := sc.Storage.(rest.Watcher); ok {
		watchPrefix := strings.Replace(collection, prefix, prefix+"/watch", 1)
		m.handle(http.MethodGet, watchPrefix, "watch", sc.Watch(w, false))
		m.handle(http.MethodGet, watchPrefix+"/{name}", "watch", sc.Watch(w, true))
		if sc.Namespaced {
			m.handle(http.MethodGet, prefix+"/watch/"+sc.Resource.Resource, "watch", sc.Watch(w, false))
		}
	}
}

// readWrite mounts get, update and (on a storage that also gets) patch of
// the object at path.
func (m *mounter) readWrite(path string) {
	sc := m.sc
	g, getter := sc.Storage.(rest.Getter)
	if getter {
		m.handle(http.MethodGet, path, "get", sc.Get(g))
	}
	if u, ok := sc.Storage.(rest.Updater); ok {
		m.handle(http.MethodPut, path, "update", sc.Update(u))
		if getter {
			m.handle(http.MethodPatch, path, "patch", sc.Patch(u))
		}
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
