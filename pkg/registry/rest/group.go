package rest

import (
	"iter"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// APIGroupInfo is what a RESTStorageProvider builds for its API group: the
// storage of every resource of every served version.
type APIGroupInfo struct {
	// GroupName is "" for the core group.
	GroupName string
	// PrioritizedVersions lists the served versions, preferred first.
	PrioritizedVersions []string
	// VersionedResourcesStorageMap maps version -> resource (or
	// "resource/subresource") -> its storage, e.g. ["v1"]["pods/status"].
	VersionedResourcesStorageMap map[string]map[string]Storage
}

// Destroy releases the storage of every resource of the group.
func (g *APIGroupInfo) Destroy() {
	for _, resources := range g.VersionedResourcesStorageMap {
		for _, s := range resources {
			s.Destroy()
		}
	}
}

// StorageReadinessCheckers are the storages of every version of the group
// that say when they are ready (a watch cache, after its first list).
func (g *APIGroupInfo) StorageReadinessCheckers() []StorageReadinessChecker {
	var out []StorageReadinessChecker
	for _, resources := range g.VersionedResourcesStorageMap {
		for _, s := range resources {
			if c, ok := s.(StorageReadinessChecker); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// PreferredResources yields the resources (not their subresources) of the
// preferred version of each of groups, with their storage.
func PreferredResources(groups []APIGroupInfo) iter.Seq2[schema.GroupVersionResource, Storage] {
	return func(yield func(schema.GroupVersionResource, Storage) bool) {
		for _, g := range groups {
			version := g.PrioritizedVersions[0]
			for name, st := range g.VersionedResourcesStorageMap[version] {
				if !strings.Contains(name, "/") && !yield(schema.GroupVersionResource{Group: g.GroupName, Version: version, Resource: name}, st) {
					return
				}
			}
		}
	}
}
