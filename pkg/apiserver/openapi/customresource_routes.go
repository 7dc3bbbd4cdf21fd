package openapi

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi/route"
)

var operationIDAndTags = route.OperationIDAndTags

// definition is a body sample naming its definition, as kube's builder
// of custom resources names theirs (no Go type stands behind them).
type definition string

func (d definition) OpenAPICanonicalTypeName() string { return string(d) }

// The shared definitions the routes read and write.
const (
	statusDefinition        definition = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
	patchDefinition         definition = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
	deleteOptionsDefinition definition = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
	scaleDefinition         definition = "io.k8s.api.autoscaling.v1.Scale"
)

const prettyDoc = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."

// customResourceRoutes are the routes kube's OpenAPI builder documents
// for one version of a custom resource, in its order.
func customResourceRoutes(cr CustomResource) []common.Route {
	b := crRouteBuilder{cr: cr, kind: definition(cr.KindDefinition), list: definition(cr.ListDefinition)}
	root := "/apis/" + cr.Group + "/" + cr.Version + "/" + cr.Plural
	var routes []common.Route
	if cr.Namespaced {
		all := b.route(root, "", http.MethodGet, "list", "list", b.list)
		all.Operation = "list" + cr.Kind + "ForAllNamespaces"
		routes = append(routes, all)
		root = "/apis/" + cr.Group + "/" + cr.Version + "/namespaces/{namespace}/" + cr.Plural
	}
	routes = append(routes,
		b.route(root, "", http.MethodGet, "list", "list", b.list),
		b.reading(b.route(root, "", http.MethodPost, "post", "create", b.kind), b.kind),
		b.route(root, "", http.MethodDelete, "deletecollection", "deletecollection", statusDefinition),
		b.route(root, "/{name}", http.MethodGet, "get", "read", b.kind),
		b.reading(b.route(root, "/{name}", http.MethodPut, "put", "replace", b.kind), b.kind),
		b.route(root, "/{name}", http.MethodDelete, "delete", "delete", statusDefinition),
		b.reading(b.route(root, "/{name}", http.MethodPatch, "patch", "patch", b.kind), patchDefinition),
	)
	for _, sub := range []struct {
		serves bool
		path   string
		sample definition
	}{{cr.Status, "/{name}/status", b.kind}, {cr.Scale, "/{name}/scale", scaleDefinition}} {
		if !sub.serves {
			continue
		}
		routes = append(routes,
			b.route(root, sub.path, http.MethodGet, "get", "read", sub.sample),
			b.reading(b.route(root, sub.path, http.MethodPut, "put", "replace", sub.sample), sub.sample),
			b.reading(b.route(root, sub.path, http.MethodPatch, "patch", "patch", sub.sample), patchDefinition),
		)
	}
	return routes
}

type crRouteBuilder struct {
	cr         CustomResource
	kind, list definition
}

// route is one route under root: kube's builder's buildRoute.
func (b crRouteBuilder) route(root, path, method, action, verb string, sample definition) *route.Route {
	namespaced := ""
	if b.cr.Namespaced {
		namespaced = "Namespaced"
	}
	sub := subresourceOf(path)
	r := &route.Route{
		HTTPMethod: method, URL: root + path, Doc: b.description(sub, verb),
		Operation:     verb + namespaced + b.cr.Kind + strings.Title(sub), //nolint:staticcheck // ASCII subresource names, as kube titles them
		Params:        []common.Parameter{route.QueryParam("pretty", prettyDoc, "string")},
		ProducedTypes: []string{"application/json", "application/yaml"},
		ConsumedTypes: []string{"application/json", "application/yaml"},
		Meta: map[string]interface{}{
			"x-kubernetes-group-version-kind": metav1.GroupVersionKind{Group: b.cr.Group, Version: b.cr.Version, Kind: b.cr.Kind},
			"x-kubernetes-action":             action,
		},
		Writes: sample,
	}
	r.Returns(http.StatusOK, "OK", sample)
	if strings.Contains(root+path, "{namespace}") {
		r.Params = append(r.Params, route.PathParam("namespace", "object name and auth scope, such as for teams and projects"))
	}
	if strings.Contains(root+path, "{name}") {
		r.Params = append(r.Params, route.PathParam("name", "name of the "+b.cr.Kind))
	}
	if method == http.MethodPatch {
		r.ConsumedTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
	}
	switch action {
	case "get":
		r.AddObjectParams(metav1.GetOptions{})
	case "list", "deletecollection":
		r.AddObjectParams(metav1.ListOptions{})
	case "put":
		r.AddObjectParams(metav1.UpdateOptions{})
	case "patch":
		r.AddObjectParams(metav1.PatchOptions{})
	case "post":
		r.AddObjectParams(metav1.CreateOptions{})
	case "delete":
		r.AddObjectParams(metav1.DeleteOptions{})
		r.Read(deleteOptionsDefinition)
		r.Body().SetRequired(false)
	}
	switch action {
	case "post":
		r.Returns(http.StatusAccepted, "Accepted", sample)
		r.Returns(http.StatusCreated, "Created", sample)
	case "delete":
		r.Returns(http.StatusAccepted, "Accepted", sample)
	case "put":
		r.Returns(http.StatusCreated, "Created", sample)
	}
	return r
}

// reading documents the body r reads.
func (b crRouteBuilder) reading(r *route.Route, sample definition) common.Route {
	r.Read(sample)
	return r
}

// subresourceOf is the subresource of a path under the resource
// ("/{name}/scale" is "scale").
func subresourceOf(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) == 3 {
		return parts[2]
	}
	return ""
}

// description is kube's builder's description of an operation.
func (b crRouteBuilder) description(sub, verb string) string {
	var article string
	switch verb {
	case "list":
		article = " objects of kind "
	case "read", "replace", "patch":
		article = " the specified "
	case "create", "delete":
		article = route.ArticleFor(b.cr.Kind)
	}
	if sub != "" {
		sub = " " + sub + " of"
	}
	switch verb {
	case "patch":
		return "partially update" + sub + article + b.cr.Kind
	case "deletecollection":
		if sub != "" {
			sub += " a"
		}
		return "delete collection of" + sub + " " + b.cr.Kind
	}
	return verb + sub + article + b.cr.Kind
}
