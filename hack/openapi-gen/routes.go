package main

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi/route"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// The media types kube-apiserver declares for the built-in groups.
var (
	mediaTypes       = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	streamMediaTypes = []string{"application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"}
	allMediaTypes    = append(append([]string(nil), mediaTypes...), streamMediaTypes...)
	patchMediaTypes  = []string{
		string(types.JSONPatchType), string(types.MergePatchType),
		string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType),
	}
)

const prettyDoc = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."

// routeContainer is the set of routes under one root path (one document
// of /openapi/v3): kube's go-restful WebService.
type routeContainer struct {
	root   string
	routes []common.Route
}

func (c *routeContainer) RootPath() string                   { return c.root }
func (c *routeContainer) PathParameters() []common.Parameter { return nil }
func (c *routeContainer) Routes() []common.Route             { return c.routes }

// resourceRoutes builds the routes kube's API installer registers for
// the endpoints of one group version, in the same order.
func resourceRoutes(g apiserver.GroupVersionEndpoints) (*routeContainer, error) {
	gv := g.GroupVersion
	root := "/apis/" + gv.String()
	if gv.Group == "" {
		root = "/api/" + gv.Version
	}
	c := &routeContainer{root: root}
	kinds := map[string]schema.GroupVersionKind{}
	for _, e := range g.Endpoints {
		if e.Subresource == "" {
			kinds[e.Resource.Resource] = e.Kind
		}
	}
	for i := range g.Endpoints {
		e := &g.Endpoints[i]
		routes, err := endpointRoutes(root, e, kinds[e.Resource.Resource].Kind)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", gv, e.Path, err)
		}
		c.routes = append(c.routes, routes...)
	}
	// The group version's own discovery document.
	c.routes = append(c.routes, &route.Route{
		HTTPMethod: http.MethodGet, URL: root + "/", Operation: "getAPIResources", Doc: "get available resources",
		ProducedTypes: mediaTypes, ConsumedTypes: mediaTypes, Writes: metav1.APIResourceList{},
	})
	return c, nil
}

// action is one route of an endpoint before it is documented: kube's
// installer action.
type action struct {
	verb          string // GET, LIST, POST, PUT, PATCH, DELETE, DELETECOLLECTION, WATCH, WATCHLIST
	path          string
	params        []common.Parameter
	allNamespaces bool
}

// endpointRoutes documents the routes of one endpoint. kind names the
// operations: the kind of the main resource, also for subresources.
func endpointRoutes(root string, e *apiserver.Endpoint, kind string) ([]common.Route, error) {
	if routes, ok := optionsRoutes(root, e, kind); ok {
		return routes, nil
	}
	st := e.Storage
	_, isCreater := st.(rest.Creater)
	lister, isLister := st.(rest.Lister)
	_, isGetter := st.(rest.Getter)
	_, isGracefulDeleter := st.(rest.GracefulDeleter)
	_, isCollectionDeleter := st.(rest.CollectionDeleter)
	_, isUpdater := st.(rest.Updater)
	isPatcher := isUpdater && isGetter
	_, isWatcher := st.(rest.Watcher)
	isSubresource := e.Subresource != ""

	object := reflect.ValueOf(st.New()).Elem().Interface()
	var list interface{}
	if isLister {
		list = reflect.ValueOf(lister.NewList()).Elem().Interface()
	}
	deleteReturns := interface{}(metav1.Status{})
	if d, ok := st.(rest.MayReturnFullObjectDeleter); ok && d.DeleteReturnsDeletedObject() {
		deleteReturns = object
	}

	// The name is that of the endpoint's own kind ("name of the Scale"),
	// the operations are named after the main resource's.
	nameParam := route.PathParam("name", "name of the "+e.Kind.Kind)
	namespaced := ""
	var actions []action
	add := func(ok bool, a action) {
		if ok {
			actions = append(actions, a)
		}
	}
	allowWatchList := isWatcher && isLister
	resourcePath, itemPath := e.Resource.Resource, e.Resource.Resource+"/{name}"
	var resourceParams []common.Parameter
	if e.Namespaced {
		namespaced = "Namespaced"
		resourcePath = "namespaces/{namespace}/" + e.Resource.Resource
		itemPath = resourcePath + "/{name}"
		resourceParams = []common.Parameter{route.PathParam("namespace", "object name and auth scope, such as for teams and projects")}
	}
	nameParams := append(append([]common.Parameter(nil), resourceParams...), nameParam)
	if isSubresource {
		itemPath += "/" + e.Subresource
		resourcePath = itemPath
		resourceParams = nameParams
	}
	add(isLister, action{"LIST", resourcePath, resourceParams, false})
	add(isCreater, action{"POST", resourcePath, resourceParams, false})
	add(isCollectionDeleter, action{"DELETECOLLECTION", resourcePath, resourceParams, false})
	add(allowWatchList, action{"WATCHLIST", "watch/" + resourcePath, resourceParams, false})
	add(isGetter, action{"GET", itemPath, nameParams, false})
	add(isUpdater, action{"PUT", itemPath, nameParams, false})
	add(isPatcher, action{"PATCH", itemPath, nameParams, false})
	add(isGracefulDeleter, action{"DELETE", itemPath, nameParams, false})
	add(isWatcher, action{"WATCH", "watch/" + itemPath, nameParams, false})
	if e.Namespaced && !isSubresource {
		add(isLister, action{"LIST", e.Resource.Resource, nil, true})
		add(allowWatchList, action{"WATCHLIST", "watch/" + e.Resource.Resource, nil, true})
	}

	sub := title(e.Subresource)
	gvk := metav1.GroupVersionKind{Group: e.Kind.Group, Version: e.Kind.Version, Kind: e.Kind.Kind}
	var routes []common.Route
	for _, a := range actions {
		ns, suffix := namespaced, ""
		if a.allNamespaces {
			ns, suffix = "", "ForAllNamespaces"
		}
		r := &route.Route{
			URL:           root + "/" + a.path,
			Params:        []common.Parameter{route.QueryParam("pretty", prettyDoc, "string")},
			ConsumedTypes: []string{"*/*"},
			ProducedTypes: mediaTypes,
			Meta: map[string]interface{}{
				"x-kubernetes-group-version-kind": gvk,
				"x-kubernetes-action":             strings.ToLower(a.verb),
			},
		}
		name := func(verb string) string { return verb + ns + kind + sub + suffix }
		switch a.verb {
		case "GET":
			r.HTTPMethod, r.Operation = http.MethodGet, name("read")
			r.Doc = docFor("read the specified "+kind, "read "+e.Subresource+" of the specified "+kind, isSubresource)
			r.Returns(http.StatusOK, "OK", object)
			r.Writes = object
		case "LIST":
			r.HTTPMethod, r.Operation = http.MethodGet, name("list")
			r.Doc = docFor("list objects of kind "+kind, "list "+e.Subresource+" of objects of kind "+kind, isSubresource)
			if isWatcher {
				r.Doc = docFor("list or watch objects of kind "+kind, "list or watch "+e.Subresource+" of objects of kind "+kind, isSubresource)
			}
			r.ProducedTypes = allMediaTypes
			r.Returns(http.StatusOK, "OK", list)
			r.Writes = list
			r.AddObjectParams(metav1.ListOptions{})
		case "PUT":
			r.HTTPMethod, r.Operation = http.MethodPut, name("replace")
			r.Doc = docFor("replace the specified "+kind, "replace "+e.Subresource+" of the specified "+kind, isSubresource)
			r.Returns(http.StatusOK, "OK", object)
			r.Returns(http.StatusCreated, "Created", object)
			r.Read(object)
			r.Writes = object
			r.AddObjectParams(metav1.UpdateOptions{})
		case "PATCH":
			r.HTTPMethod, r.Operation = http.MethodPatch, name("patch")
			r.Doc = docFor("partially update the specified "+kind, "partially update "+e.Subresource+" of the specified "+kind, isSubresource)
			r.ConsumedTypes = patchMediaTypes
			r.Returns(http.StatusOK, "OK", object)
			r.Returns(http.StatusCreated, "Created", object)
			r.Read(metav1.Patch{})
			r.Writes = object
			r.AddObjectParams(metav1.PatchOptions{})
		case "POST":
			r.HTTPMethod, r.Operation = http.MethodPost, name("create")
			article := route.ArticleFor(kind)
			r.Doc = docFor("create"+article+kind, "create "+e.Subresource+" of"+article+kind, isSubresource)
			r.Returns(http.StatusOK, "OK", object)
			r.Returns(http.StatusCreated, "Created", object)
			r.Returns(http.StatusAccepted, "Accepted", object)
			r.Read(object)
			r.Writes = object
			r.AddObjectParams(metav1.CreateOptions{})
		case "DELETE":
			r.HTTPMethod, r.Operation = http.MethodDelete, name("delete")
			article := route.ArticleFor(kind)
			r.Doc = docFor("delete"+article+kind, "delete "+e.Subresource+" of"+article+kind, isSubresource)
			r.Writes = deleteReturns
			r.Returns(http.StatusOK, "OK", deleteReturns)
			r.Returns(http.StatusAccepted, "Accepted", deleteReturns)
			r.Read(metav1.DeleteOptions{})
			r.Body().SetRequired(false)
			r.AddObjectParams(metav1.DeleteOptions{})
		case "DELETECOLLECTION":
			r.HTTPMethod, r.Operation = http.MethodDelete, "deletecollection"+ns+kind+sub+suffix
			r.Doc = docFor("delete collection of "+kind, "delete collection of "+e.Subresource+" of a "+kind, isSubresource)
			r.Writes = metav1.Status{}
			r.Returns(http.StatusOK, "OK", metav1.Status{})
			r.Read(metav1.DeleteOptions{})
			r.Body().SetRequired(false)
			r.AddObjectParams(metav1.DeleteOptions{})
			r.AddObjectParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks")
		case "WATCH":
			r.HTTPMethod, r.Operation = http.MethodGet, name("watch")
			r.Doc = docFor("watch changes to an object of kind "+kind, "watch changes to "+e.Subresource+" of an object of kind "+kind, isSubresource) +
				". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
			r.ProducedTypes = allMediaTypes
			r.Returns(http.StatusOK, "OK", metav1.WatchEvent{})
			r.Writes = metav1.WatchEvent{}
			r.AddObjectParams(metav1.ListOptions{})
		case "WATCHLIST":
			r.HTTPMethod, r.Operation = http.MethodGet, "watch"+ns+kind+sub+"List"+suffix
			r.Doc = docFor("watch individual changes to a list of "+kind, "watch individual changes to a list of "+e.Subresource+" of "+kind, isSubresource) +
				". deprecated: use the 'watch' parameter with a list operation instead."
			r.ProducedTypes = allMediaTypes
			r.Returns(http.StatusOK, "OK", metav1.WatchEvent{})
			r.Writes = metav1.WatchEvent{}
			r.AddObjectParams(metav1.ListOptions{})
		}
		r.Params = append(r.Params, a.params...)
		routes = append(routes, r)
	}
	return routes, nil
}

func docFor(resource, subresource string, isSubresource bool) string {
	if isSubresource {
		return subresource
	}
	return resource
}

// title upper-cases the first letter of a subresource ("status" ->
// "Status"), as kube's operation names have it.
func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
}

// discoveryRoutes are the routes of /api, /apis, each group and /version.
func discoveryRoutes(groups []string) []*routeContainer {
	out := []*routeContainer{
		{root: "/api", routes: []common.Route{&route.Route{HTTPMethod: http.MethodGet, URL: "/api/", Operation: "getAPIVersions",
			Doc: "get available API versions", ProducedTypes: mediaTypes, ConsumedTypes: mediaTypes, Writes: metav1.APIVersions{}}}},
		{root: "/apis", routes: []common.Route{&route.Route{HTTPMethod: http.MethodGet, URL: "/apis/", Operation: "getAPIVersions",
			Doc: "get available API versions", ProducedTypes: mediaTypes, ConsumedTypes: mediaTypes, Writes: metav1.APIGroupList{}}}},
	}
	for _, g := range groups {
		root := "/apis/" + g
		out = append(out, &routeContainer{root: root, routes: []common.Route{&route.Route{HTTPMethod: http.MethodGet, URL: root + "/",
			Operation: "getAPIGroup", Doc: "get information of a group", ProducedTypes: mediaTypes, ConsumedTypes: mediaTypes, Writes: metav1.APIGroup{}}}})
	}
	out = append(out, &routeContainer{root: "/version", routes: []common.Route{&route.Route{HTTPMethod: http.MethodGet, URL: "/version/",
		Operation: "getCodeVersion", Doc: "get the version information for this server",
		ProducedTypes: []string{"application/json"}, ConsumedTypes: []string{"application/json"}, Writes: version.Info{}}}})
	return out
}
