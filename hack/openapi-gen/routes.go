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
	actions, body := endpointActions(e)
	namespaced := ""
	if e.Namespaced {
		namespaced = "Namespaced"
	}
	gvk := metav1.GroupVersionKind{Group: e.Kind.Group, Version: e.Kind.Version, Kind: e.Kind.Kind}
	var routes []common.Route
	for _, a := range actions {
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
		n := operationName{namespaced: namespaced, kind: kind, sub: title(e.Subresource)}
		if a.allNamespaces {
			n.namespaced, n.suffix = "", "ForAllNamespaces"
		}
		d := describer{r: r, kind: kind, subresource: e.Subresource, body: body}
		if !d.read(a.verb, n) {
			d.write(a.verb, n)
		}
		r.Params = append(r.Params, a.params...)
		routes = append(routes, r)
	}
	return routes, nil
}

// endpointBody holds the Go types an endpoint's routes read and write,
// and whether its lists may be watched.
type endpointBody struct {
	object, list, deleteReturns interface{}
	watchable                   bool
}

// endpointActions lists an endpoint's routes in the order kube's
// installer registers them, from the verbs its storage implements.
func endpointActions(e *apiserver.Endpoint) ([]action, endpointBody) {
	st := e.Storage
	_, isCreater := st.(rest.Creater)
	lister, isLister := st.(rest.Lister)
	_, isGetter := st.(rest.Getter)
	_, isGracefulDeleter := st.(rest.GracefulDeleter)
	_, isCollectionDeleter := st.(rest.CollectionDeleter)
	_, isUpdater := st.(rest.Updater)
	_, isWatcher := st.(rest.Watcher)
	body := endpointBody{object: reflect.ValueOf(st.New()).Elem().Interface(), deleteReturns: metav1.Status{}, watchable: isWatcher}
	if isLister {
		body.list = reflect.ValueOf(lister.NewList()).Elem().Interface()
	}
	if d, ok := st.(rest.MayReturnFullObjectDeleter); ok && d.DeleteReturnsDeletedObject() {
		body.deleteReturns = body.object
	}

	// The name is that of the endpoint's own kind ("name of the Scale"),
	// the operations are named after the main resource's.
	nameParam := route.PathParam("name", "name of the "+e.Kind.Kind)
	resourcePath, itemPath := e.Resource.Resource, e.Resource.Resource+"/{name}"
	var resourceParams []common.Parameter
	if e.Namespaced {
		resourcePath = "namespaces/{namespace}/" + e.Resource.Resource
		itemPath = resourcePath + "/{name}"
		resourceParams = []common.Parameter{route.PathParam("namespace", "object name and auth scope, such as for teams and projects")}
	}
	nameParams := append(append([]common.Parameter(nil), resourceParams...), nameParam)
	if e.Subresource != "" {
		itemPath += "/" + e.Subresource
		resourcePath = itemPath
		resourceParams = nameParams
	}
	var actions []action
	add := func(ok bool, a action) {
		if ok {
			actions = append(actions, a)
		}
	}
	allowWatchList := isWatcher && isLister
	add(isLister, action{"LIST", resourcePath, resourceParams, false})
	add(isCreater, action{"POST", resourcePath, resourceParams, false})
	add(isCollectionDeleter, action{"DELETECOLLECTION", resourcePath, resourceParams, false})
	add(allowWatchList, action{"WATCHLIST", "watch/" + resourcePath, resourceParams, false})
	add(isGetter, action{"GET", itemPath, nameParams, false})
	add(isUpdater, action{"PUT", itemPath, nameParams, false})
	add(isUpdater && isGetter, action{"PATCH", itemPath, nameParams, false})
	add(isGracefulDeleter, action{"DELETE", itemPath, nameParams, false})
	add(isWatcher, action{"WATCH", "watch/" + itemPath, nameParams, false})
	if e.Namespaced && e.Subresource == "" {
		add(isLister, action{"LIST", e.Resource.Resource, nil, true})
		add(allowWatchList, action{"WATCHLIST", "watch/" + e.Resource.Resource, nil, true})
	}
	return actions, body
}

// operationName builds kube's operation IDs: verb, "Namespaced", kind,
// subresource, then "ForAllNamespaces" for the cluster-wide routes of a
// namespaced resource ("listNamespacedPod", "readNamespacedPodStatus",
// "listPodForAllNamespaces").
type operationName struct{ namespaced, kind, sub, suffix string }

func (n operationName) of(verb string) string { return verb + n.namespaced + n.kind + n.sub + n.suffix }

// describer fills in one route's method, operation, documentation, body
// and responses, as kube's installer does for its verb.
type describer struct {
	r                 *route.Route
	kind, subresource string
	body              endpointBody
}

func (d describer) doc(resource, subresource string) string {
	return docFor(resource, subresource, d.subresource != "")
}

// read describes the verbs that only read: GET, LIST, WATCH and
// WATCHLIST. It reports whether verb was one of them.
func (d describer) read(verb string, n operationName) bool {
	r, kind, sub := d.r, d.kind, d.subresource
	switch verb {
	case "GET":
		r.HTTPMethod, r.Operation = http.MethodGet, n.of("read")
		r.Doc = d.doc("read the specified "+kind, "read "+sub+" of the specified "+kind)
		r.Returns(http.StatusOK, "OK", d.body.object)
		r.Writes = d.body.object
	case "LIST":
		r.HTTPMethod, r.Operation = http.MethodGet, n.of("list")
		r.Doc = d.doc("list objects of kind "+kind, "list "+sub+" of objects of kind "+kind)
		if d.body.watchable {
			r.Doc = d.doc("list or watch objects of kind "+kind, "list or watch "+sub+" of objects of kind "+kind)
		}
		r.ProducedTypes = allMediaTypes
		r.Returns(http.StatusOK, "OK", d.body.list)
		r.Writes = d.body.list
		r.AddObjectParams(metav1.ListOptions{})
	case "WATCH":
		r.HTTPMethod, r.Operation = http.MethodGet, n.of("watch")
		r.Doc = d.doc("watch changes to an object of kind "+kind, "watch changes to "+sub+" of an object of kind "+kind) +
			". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
		d.watchEvents()
	case "WATCHLIST":
		r.HTTPMethod, r.Operation = http.MethodGet, "watch"+n.namespaced+n.kind+n.sub+"List"+n.suffix
		r.Doc = d.doc("watch individual changes to a list of "+kind, "watch individual changes to a list of "+sub+" of "+kind) +
			". deprecated: use the 'watch' parameter with a list operation instead."
		d.watchEvents()
	default:
		return false
	}
	return true
}

func (d describer) watchEvents() {
	d.r.ProducedTypes = allMediaTypes
	d.r.Returns(http.StatusOK, "OK", metav1.WatchEvent{})
	d.r.Writes = metav1.WatchEvent{}
	d.r.AddObjectParams(metav1.ListOptions{})
}

// write describes the verbs that write: PUT, PATCH, POST, DELETE and
// DELETECOLLECTION.
func (d describer) write(verb string, n operationName) {
	r, kind, sub, object := d.r, d.kind, d.subresource, d.body.object
	article := route.ArticleFor(kind)
	switch verb {
	case "PUT":
		r.HTTPMethod, r.Operation = http.MethodPut, n.of("replace")
		r.Doc = d.doc("replace the specified "+kind, "replace "+sub+" of the specified "+kind)
		r.Returns(http.StatusOK, "OK", object)
		r.Returns(http.StatusCreated, "Created", object)
		r.Read(object)
		r.Writes = object
		r.AddObjectParams(metav1.UpdateOptions{})
	case "PATCH":
		r.HTTPMethod, r.Operation = http.MethodPatch, n.of("patch")
		r.Doc = d.doc("partially update the specified "+kind, "partially update "+sub+" of the specified "+kind)
		r.ConsumedTypes = patchMediaTypes
		r.Returns(http.StatusOK, "OK", object)
		r.Returns(http.StatusCreated, "Created", object)
		r.Read(metav1.Patch{})
		r.Writes = object
		r.AddObjectParams(metav1.PatchOptions{})
	case "POST":
		r.HTTPMethod, r.Operation = http.MethodPost, n.of("create")
		r.Doc = d.doc("create"+article+kind, "create "+sub+" of"+article+kind)
		r.Returns(http.StatusOK, "OK", object)
		r.Returns(http.StatusCreated, "Created", object)
		r.Returns(http.StatusAccepted, "Accepted", object)
		r.Read(object)
		r.Writes = object
		r.AddObjectParams(metav1.CreateOptions{})
	case "DELETE":
		r.HTTPMethod, r.Operation = http.MethodDelete, n.of("delete")
		r.Doc = d.doc("delete"+article+kind, "delete "+sub+" of"+article+kind)
		r.Writes = d.body.deleteReturns
		r.Returns(http.StatusOK, "OK", d.body.deleteReturns)
		r.Returns(http.StatusAccepted, "Accepted", d.body.deleteReturns)
		d.deleteOptionsBody()
	case "DELETECOLLECTION":
		r.HTTPMethod, r.Operation = http.MethodDelete, n.of("deletecollection")
		r.Doc = d.doc("delete collection of "+kind, "delete collection of "+sub+" of a "+kind)
		r.Writes = metav1.Status{}
		r.Returns(http.StatusOK, "OK", metav1.Status{})
		d.deleteOptionsBody()
		r.AddObjectParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks")
	}
}

// deleteOptionsBody declares the optional DeleteOptions body, and its
// fields as query parameters, of both deletes.
func (d describer) deleteOptionsBody() {
	d.r.Read(metav1.DeleteOptions{})
	d.r.Body().SetRequired(false)
	d.r.AddObjectParams(metav1.DeleteOptions{})
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
