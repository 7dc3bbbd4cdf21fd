package main

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
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
	c.routes = append(c.routes, &route{
		method: http.MethodGet, path: root + "/", operation: "getAPIResources", doc: "get available resources",
		produces: mediaTypes, consumes: mediaTypes, writes: metav1.APIResourceList{},
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
	nameParam := pathParam("name", "name of the "+e.Kind.Kind)
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
		resourceParams = []common.Parameter{pathParam("namespace", "object name and auth scope, such as for teams and projects")}
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
		r := &route{
			path:     root + "/" + a.path,
			params:   []common.Parameter{queryParam("pretty", prettyDoc, "string")},
			consumes: []string{"*/*"},
			produces: mediaTypes,
			metadata: map[string]interface{}{
				"x-kubernetes-group-version-kind": gvk,
				"x-kubernetes-action":             strings.ToLower(a.verb),
			},
		}
		name := func(verb string) string { return verb + ns + kind + sub + suffix }
		switch a.verb {
		case "GET":
			r.method, r.operation = http.MethodGet, name("read")
			r.doc = docFor("read the specified "+kind, "read "+e.Subresource+" of the specified "+kind, isSubresource)
			r.returns(http.StatusOK, "OK", object)
			r.writes = object
		case "LIST":
			r.method, r.operation = http.MethodGet, name("list")
			r.doc = docFor("list objects of kind "+kind, "list "+e.Subresource+" of objects of kind "+kind, isSubresource)
			if isWatcher {
				r.doc = docFor("list or watch objects of kind "+kind, "list or watch "+e.Subresource+" of objects of kind "+kind, isSubresource)
			}
			r.produces = allMediaTypes
			r.returns(http.StatusOK, "OK", list)
			r.writes = list
			r.addObjectParams(metav1.ListOptions{})
		case "PUT":
			r.method, r.operation = http.MethodPut, name("replace")
			r.doc = docFor("replace the specified "+kind, "replace "+e.Subresource+" of the specified "+kind, isSubresource)
			r.returns(http.StatusOK, "OK", object)
			r.returns(http.StatusCreated, "Created", object)
			r.read(object)
			r.writes = object
			r.addObjectParams(metav1.UpdateOptions{})
		case "PATCH":
			r.method, r.operation = http.MethodPatch, name("patch")
			r.doc = docFor("partially update the specified "+kind, "partially update "+e.Subresource+" of the specified "+kind, isSubresource)
			r.consumes = patchMediaTypes
			r.returns(http.StatusOK, "OK", object)
			r.returns(http.StatusCreated, "Created", object)
			r.read(metav1.Patch{})
			r.writes = object
			r.addObjectParams(metav1.PatchOptions{})
		case "POST":
			r.method, r.operation = http.MethodPost, name("create")
			article := articleFor(kind)
			r.doc = docFor("create"+article+kind, "create "+e.Subresource+" of"+article+kind, isSubresource)
			r.returns(http.StatusOK, "OK", object)
			r.returns(http.StatusCreated, "Created", object)
			r.returns(http.StatusAccepted, "Accepted", object)
			r.read(object)
			r.writes = object
			r.addObjectParams(metav1.CreateOptions{})
		case "DELETE":
			r.method, r.operation = http.MethodDelete, name("delete")
			article := articleFor(kind)
			r.doc = docFor("delete"+article+kind, "delete "+e.Subresource+" of"+article+kind, isSubresource)
			r.writes = deleteReturns
			r.returns(http.StatusOK, "OK", deleteReturns)
			r.returns(http.StatusAccepted, "Accepted", deleteReturns)
			r.read(metav1.DeleteOptions{})
			r.body().required = false
			r.addObjectParams(metav1.DeleteOptions{})
		case "DELETECOLLECTION":
			r.method, r.operation = http.MethodDelete, "deletecollection"+ns+kind+sub+suffix
			r.doc = docFor("delete collection of "+kind, "delete collection of "+e.Subresource+" of a "+kind, isSubresource)
			r.writes = metav1.Status{}
			r.returns(http.StatusOK, "OK", metav1.Status{})
			r.read(metav1.DeleteOptions{})
			r.body().required = false
			r.addObjectParams(metav1.DeleteOptions{})
			r.addObjectParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks")
		case "WATCH":
			r.method, r.operation = http.MethodGet, name("watch")
			r.doc = docFor("watch changes to an object of kind "+kind, "watch changes to "+e.Subresource+" of an object of kind "+kind, isSubresource) +
				". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
			r.produces = allMediaTypes
			r.returns(http.StatusOK, "OK", metav1.WatchEvent{})
			r.writes = metav1.WatchEvent{}
			r.addObjectParams(metav1.ListOptions{})
		case "WATCHLIST":
			r.method, r.operation = http.MethodGet, "watch"+ns+kind+sub+"List"+suffix
			r.doc = docFor("watch individual changes to a list of "+kind, "watch individual changes to a list of "+e.Subresource+" of "+kind, isSubresource) +
				". deprecated: use the 'watch' parameter with a list operation instead."
			r.produces = allMediaTypes
			r.returns(http.StatusOK, "OK", metav1.WatchEvent{})
			r.writes = metav1.WatchEvent{}
			r.addObjectParams(metav1.ListOptions{})
		}
		r.params = append(r.params, a.params...)
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

// articleFor is " a ", " an " or " " (plurals) before a kind.
func articleFor(noun string) string {
	if !strings.HasSuffix(noun, "ss") && strings.HasSuffix(noun, "s") {
		return " "
	}
	if strings.ContainsRune("aeiou", unicode.ToLower(rune(noun[0]))) {
		return " an "
	}
	return " a "
}

// discoveryRoutes are the routes of /api, /apis, each group and /version.
func discoveryRoutes(groups []string) []*routeContainer {
	out := []*routeContainer{
		{root: "/api", routes: []common.Route{&route{method: http.MethodGet, path: "/api/", operation: "getAPIVersions",
			doc: "get available API versions", produces: mediaTypes, consumes: mediaTypes, writes: metav1.APIVersions{}}}},
		{root: "/apis", routes: []common.Route{&route{method: http.MethodGet, path: "/apis/", operation: "getAPIVersions",
			doc: "get available API versions", produces: mediaTypes, consumes: mediaTypes, writes: metav1.APIGroupList{}}}},
	}
	for _, g := range groups {
		root := "/apis/" + g
		out = append(out, &routeContainer{root: root, routes: []common.Route{&route{method: http.MethodGet, path: root + "/",
			operation: "getAPIGroup", doc: "get information of a group", produces: mediaTypes, consumes: mediaTypes, writes: metav1.APIGroup{}}}})
	}
	out = append(out, &routeContainer{root: "/version", routes: []common.Route{&route{method: http.MethodGet, path: "/version/",
		operation: "getCodeVersion", doc: "get the version information for this server",
		produces: []string{"application/json"}, consumes: []string{"application/json"}, writes: version.Info{}}}})
	return out
}
