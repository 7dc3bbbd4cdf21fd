// Package discovery serves the discovery documents (/api, /api/v1, /apis,
// /apis/GROUP, /apis/GROUP/VERSION), and the aggregated documents of /api
// and /apis (apidiscovery.k8s.io/v2, which kubectl and client-go ask for
// first), all built from the same endpoints the routes are installed
// from, never written by hand.
package discovery

import (
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GroupVersion is what discovery lists of one served group version.
type GroupVersion struct {
	Group, Version string
	Resources      []metav1.APIResource
	// CustomResources lists custom resources, as kube's CRD discovery
	// does: in the order given (each resource, then its status, then its
	// scale), naming the group and version of every kind in the
	// aggregated document, even this one's. Built-in resources are
	// sorted by name, and name them only when they differ.
	CustomResources bool
	// Remote lists the resources of an extension API server's group
	// version in the order it gave them (kube's aggregator passes them on
	// as fetched).
	Remote bool
	// Stale marks a remote group version whose server did not answer the
	// last fetch: the aggregated document lists the resources last known
	// (none, if never fetched) with freshness Stale, as kube's does.
	Stale bool
}

// Documents holds the discovery documents of a server. Build it once all
// groups are installed.
type Documents struct {
	core     *GroupVersion
	groups   []string // names in installation order
	versions map[string][]*GroupVersion

	// The aggregated documents of /api and /apis.
	aggregatedLegacy, aggregatedGroups *Aggregated
}

// New builds the documents of the given group versions; within a group,
// the first version given is the preferred one. It fails when a
// subresource has no resource of the same scope. The documents keep
// copies: gvs may be used again (documents are rebuilt, with the same
// built-in group versions, whenever custom resources come or go).
func New(gvs []*GroupVersion) (*Documents, error) {
	d := &Documents{versions: map[string][]*GroupVersion{}}
	for _, in := range gvs {
		gv := *in
		gv.Resources = slices.Clone(in.Resources)
		if !gv.CustomResources && !gv.Remote {
			sort.Slice(gv.Resources, func(i, j int) bool { return gv.Resources[i].Name < gv.Resources[j].Name })
		}
		if gv.Group == "" {
			d.core = &gv
			continue
		}
		if _, seen := d.versions[gv.Group]; !seen {
			d.groups = append(d.groups, gv.Group)
		}
		d.versions[gv.Group] = append(d.versions[gv.Group], &gv)
	}
	if err := d.buildAggregated(); err != nil {
		return nil, err
	}
	return d, nil
}

// StorageVersionHash is kube's hash of the stored group version kind,
// which clients use to notice a change of storage version.
func StorageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// APIVersions is the document at /api. serverAddress is the address
// clients reach the server at.
func (d *Documents) APIVersions(r *http.Request) runtime.Object {
	v := &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress(r)},
		},
	}
	if d.core != nil {
		v.Versions = []string{d.core.Version}
	}
	return v
}

// APIGroupList is the document at /apis.
func (d *Documents) APIGroupList() runtime.Object {
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, name := range d.groups {
		list.Groups = append(list.Groups, *d.apiGroup(name))
	}
	if list.Groups == nil {
		list.Groups = []metav1.APIGroup{}
	}
	return list
}

// APIGroup is the document at /apis/GROUP, or nil when the group is not
// served.
func (d *Documents) APIGroup(name string) runtime.Object {
	if _, ok := d.versions[name]; !ok {
		return nil
	}
	g := d.apiGroup(name)
	g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	return g
}

func (d *Documents) apiGroup(name string) *metav1.APIGroup {
	g := &metav1.APIGroup{Name: name}
	for _, gv := range d.versions[name] {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + gv.Version, Version: gv.Version})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

// APIResourceList is the document of a group version ("" group: /api/v1),
// or nil when it is not served.
func (d *Documents) APIResourceList(group, version string) runtime.Object {
	var gv *GroupVersion
	if group == "" {
		if d.core != nil && d.core.Version == version {
			gv = d.core
		}
	} else {
		for _, v := range d.versions[group] {
			if v.Version == version {
				gv = v
			}
		}
	}
	if gv == nil {
		return nil
	}
	name := version
	tm := metav1.TypeMeta{Kind: "APIResourceList"} // kube's /api/v1 has no apiVersion
	if group != "" {
		name = group + "/" + version
		tm.APIVersion = "v1"
	}
	return &metav1.APIResourceList{
		TypeMeta:     tm,
		GroupVersion: name,
		APIResources: gv.Resources,
	}
}

// GroupVersions returns every served group version, core first.
func (d *Documents) GroupVersions() []*GroupVersion {
	var out []*GroupVersion
	if d.core != nil {
		out = append(out, d.core)
	}
	for _, name := range d.groups {
		out = append(out, d.versions[name]...)
	}
	return out
}

// serverAddress is the host and port the request came in on.
func serverAddress(r *http.Request) string {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return addr.String()
	}
	return r.Host
}
