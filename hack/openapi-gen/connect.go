package main

import (
	"net/http"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi/route"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// logMediaTypes are what pods/log declares it produces.
var logMediaTypes = append([]string{"text/plain"}, mediaTypes...)

// optionsRoutes documents a subresource served with options from the
// query (kube's connect verbs, and pods/log), as kube's installer does:
// one route per connect method (and per method again under /{path} when
// the subresource takes a subpath), the options' fields as query
// parameters, a string answer. ok is false for other storages.
func optionsRoutes(root string, e *apiserver.Endpoint, kind string) ([]common.Route, bool) {
	gvk := metav1.GroupVersionKind{Group: e.Kind.Group, Version: e.Kind.Version, Kind: e.Kind.Kind}
	ns, path, params := "", e.Resource.Resource+"/{name}/"+e.Subresource, []common.Parameter{route.PathParam("name", "name of the "+e.Kind.Kind)}
	if e.Namespaced {
		ns, path = "Namespaced", "namespaces/{namespace}/"+path
		params = append(params, route.PathParam("namespace", "object name and auth scope, such as for teams and projects"))
	}
	sub := title(e.Subresource)
	newRoute := func(method, operation, doc, action string, produces []string, options interface{}) *route.Route {
		r := &route.Route{HTTPMethod: method, URL: root + "/" + path, Operation: operation, Doc: doc,
			ConsumedTypes: []string{"*/*"}, ProducedTypes: produces, Writes: "",
			Meta: map[string]interface{}{"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": action}}
		r.Returns(http.StatusOK, "OK", "")
		r.Params = append(r.Params, params...)
		r.AddObjectParams(options)
		return r
	}
	if g, ok := e.Storage.(rest.GetterWithOptions); ok {
		opts, _, _ := g.NewGetOptions()
		r := newRoute(http.MethodGet, "read"+ns+kind+sub, "read "+e.Subresource+" of the specified "+kind, "get", logMediaTypes, elem(opts))
		r.Params = append(r.Params, route.QueryParam("pretty", prettyDoc, "string"))
		return []common.Route{r}, true
	}
	c, ok := e.Storage.(rest.Connecter)
	if !ok {
		return nil, false
	}
	opts, subpath, subpathKey := c.NewConnectOptions()
	var routes []common.Route
	for _, method := range c.ConnectMethods() {
		m := title(strings.ToLower(method))
		doc := "connect " + method + " requests to " + e.Subresource + " of " + kind
		routes = append(routes, newRoute(method, "connect"+m+ns+kind+sub, doc, "connect", []string{"*/*"}, elem(opts)))
		if subpath {
			r := newRoute(method, "connect"+m+ns+kind+sub+"WithPath", doc, "connect", []string{"*/*"}, elem(opts))
			r.URL += "/{" + subpathKey + "}"
			r.Params = append(r.Params, route.PathParam(subpathKey, "path to the resource"))
			routes = append(routes, r)
		}
	}
	return routes, true
}

// elem is the struct an options pointer points to.
func elem(obj interface{}) interface{} { return reflect.ValueOf(obj).Elem().Interface() }
