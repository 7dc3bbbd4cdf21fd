package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Aggregated is one aggregated discovery document (apidiscovery.k8s.io/v2
// APIGroupDiscoveryList): every group version of /api or of /apis with
// their resources, in one response. It is immutable once built.
type Aggregated struct {
	list *apidiscoveryv2.APIGroupDiscoveryList
	// etag is kube's: the SHA-512 of the list's JSON (without TypeMeta),
	// in upper-case hex, the same for every media type (Vary: Accept).
	etag string
}

// List returns the document with its TypeMeta set, ready to encode.
// Callers must not modify it.
func (a *Aggregated) List() *apidiscoveryv2.APIGroupDiscoveryList { return a.list }

// ETag returns the entity tag of the document, unquoted.
func (a *Aggregated) ETag() string { return a.etag }

// AggregatedLegacy is the aggregated document of /api (the core group).
func (d *Documents) AggregatedLegacy() *Aggregated { return d.aggregatedLegacy }

// AggregatedGroups is the aggregated document of /apis.
func (d *Documents) AggregatedGroups() *Aggregated { return d.aggregatedGroups }

// buildAggregated builds both documents from the same group versions as
// the unaggregated ones.
func (d *Documents) buildAggregated() error {
	var legacy []apidiscoveryv2.APIGroupDiscovery
	if d.core != nil {
		g, err := groupDiscovery("", []*GroupVersion{d.core})
		if err != nil {
			return err
		}
		legacy = append(legacy, g)
	}
	var groups []apidiscoveryv2.APIGroupDiscovery
	for _, name := range d.groups {
		g, err := groupDiscovery(name, d.versions[name])
		if err != nil {
			return err
		}
		groups = append(groups, g)
	}
	var err error
	if d.aggregatedLegacy, err = newAggregated(legacy); err != nil {
		return err
	}
	d.aggregatedGroups, err = newAggregated(groups)
	return err
}

func newAggregated(items []apidiscoveryv2.APIGroupDiscovery) (*Aggregated, error) {
	if items == nil {
		items = []apidiscoveryv2.APIGroupDiscovery{}
	}
	list := &apidiscoveryv2.APIGroupDiscoveryList{Items: items}
	data, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("discovery: hashing the aggregated document: %w", err)
	}
	list.TypeMeta = metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: apidiscoveryv2.SchemeGroupVersion.String()}
	return &Aggregated{list: list, etag: fmt.Sprintf("%X", sha512.Sum512(data))}, nil
}

// groupDiscovery is the entry of one group; its versions in the order of
// preference, as the unaggregated group lists them.
func groupDiscovery(name string, gvs []*GroupVersion) (apidiscoveryv2.APIGroupDiscovery, error) {
	g := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, gv := range gvs {
		resources, err := resourcesDiscovery(gv)
		if err != nil {
			return g, fmt.Errorf("discovery: %s/%s: %w", name, gv.Version, err)
		}
		freshness := apidiscoveryv2.DiscoveryFreshnessCurrent
		if gv.Stale {
			freshness = apidiscoveryv2.DiscoveryFreshnessStale
		}
		g.Versions = append(g.Versions, apidiscoveryv2.APIVersionDiscovery{
			Version:   gv.Version,
			Resources: resources,
			Freshness: freshness,
		})
	}
	return g, nil
}

// resourcesDiscovery turns the entries of an APIResourceList into
// aggregated entries, as kube does: each resource with its scope, response
// kind (group and version only when they differ from the group version's),
// names and verbs, its subresources nested under it in list order. The
// storageVersionHash is not part of the aggregated form.
func resourcesDiscovery(gv *GroupVersion) ([]apidiscoveryv2.APIResourceDiscovery, error) {
	var out []apidiscoveryv2.APIResourceDiscovery
	parents := map[string]int{}
	list := gv.Resources
	kind := func(r metav1.APIResource) *metav1.GroupVersionKind {
		if gv.CustomResources && r.Group == "" && r.Version == "" {
			return &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind}
		}
		return &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource:         r.Name,
			Scope:            scope(r.Namespaced),
			ResponseKind:     kind(r),
			Verbs:            r.Verbs,
			ShortNames:       r.ShortNames,
			Categories:       r.Categories,
			SingularResource: r.SingularName,
		})
		parents[r.Name] = len(out) - 1
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, found := parents[parent]
		if gv.Remote && (!found || out[i].Scope != scope(r.Namespaced)) {
			continue // an extension server's mistake is no reason to fail all discovery
		}
		if !found {
			return nil, fmt.Errorf("subresource %s has no resource %s", r.Name, parent)
		}
		if out[i].Scope != scope(r.Namespaced) {
			return nil, fmt.Errorf("subresource %s and its resource differ in scope", r.Name)
		}
		// kube sends an empty kind rather than none (clients of 1.26
		// crash on nil).
		responseKind := &metav1.GroupVersionKind{}
		if r.Kind != "" {
			responseKind = kind(r)
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: responseKind, Verbs: r.Verbs,
		})
	}
	return out, nil
}

func scope(namespaced bool) apidiscoveryv2.ResourceScope {
	if namespaced {
		return apidiscoveryv2.ScopeNamespace
	}
	return apidiscoveryv2.ScopeCluster
}
