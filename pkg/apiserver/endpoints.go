package apiserver

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// GroupVersionEndpoints is what one group version serves.
type GroupVersionEndpoints struct {
	GroupVersion schema.GroupVersion
	// Endpoints are sorted by Path, so a resource comes before its
	// subresources.
	Endpoints []Endpoint
}

// Endpoint is one resource or subresource of a group version: what the
// routes, discovery and the OpenAPI documents are built from.
type Endpoint struct {
	// Path is the key of the storage map: "pods" or "pods/status".
	Path        string
	Resource    schema.GroupVersionResource
	Subresource string
	// Kind is the kind the endpoint reads and writes (autoscaling/v1
	// Scale for a scale subresource).
	Kind schema.GroupVersionKind
	// Namespaced is the scope of the main resource.
	Namespaced bool
	// Verbs are the verbs of the storage, in discovery's order.
	Verbs   []string
	Storage rest.Storage
	// Warning is sent with every answer of the endpoint (a deprecated
	// custom resource version's); built-in endpoints warn of deprecated
	// kinds by their Go type instead.
	Warning string
}

// Endpoints lists the endpoints of every version of groups, in the order
// the groups and their PrioritizedVersions come, as install.go mounts
// them. It never touches the storage: the OpenAPI generator calls it on
// groups whose storage is never used.
func Endpoints(groups []rest.APIGroupInfo) ([]GroupVersionEndpoints, error) {
	var out []GroupVersionEndpoints
	for i := range groups {
		g := &groups[i]
		for _, version := range g.PrioritizedVersions {
			gv := schema.GroupVersion{Group: g.GroupName, Version: version}
			endpoints, err := groupVersionEndpoints(gv, g.VersionedResourcesStorageMap[version])
			if err != nil {
				return nil, err
			}
			out = append(out, GroupVersionEndpoints{GroupVersion: gv, Endpoints: endpoints})
		}
	}
	return out, nil
}

func groupVersionEndpoints(gv schema.GroupVersion, storages map[string]rest.Storage) ([]Endpoint, error) {
	paths := make([]string, 0, len(storages))
	for p := range storages {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := make([]Endpoint, 0, len(paths))
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
		out = append(out, Endpoint{
			Path:        p,
			Resource:    gv.WithResource(resource),
			Subresource: sub,
			Kind:        kind,
			Namespaced:  scoper.NamespaceScoped(),
			Verbs:       verbsOf(st, sub != ""),
			Storage:     st,
		})
	}
	return out, nil
}

// kindOf is the kind a storage serves: its own say, or the registered kind
// of the Go type it makes.
func kindOf(gv schema.GroupVersion, st rest.Storage) (schema.GroupVersionKind, error) {
	if p, ok := st.(rest.GroupVersionKindProvider); ok {
		return p.GroupVersionKind(gv), nil
	}
	kinds, _, err := api.Scheme().ObjectKinds(st.New())
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
	if c, ok := st.(rest.Connecter); ok {
		return connectVerbs(c.ConnectMethods())
	}
	if _, ok := st.(rest.GetterWithOptions); ok {
		return []string{"get"}
	}
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

// connectVerbs are the discovery verbs of a connect subresource's
// methods, as kube lists them (sorted; HEAD and OPTIONS have none).
func connectVerbs(methods []string) []string {
	byMethod := map[string]string{
		http.MethodGet: "get", http.MethodPost: "create", http.MethodPut: "update",
		http.MethodPatch: "patch", http.MethodDelete: "delete",
	}
	var verbs []string
	for _, m := range methods {
		if v, ok := byMethod[m]; ok {
			verbs = append(verbs, v)
		}
	}
	sort.Strings(verbs)
	return verbs
}
