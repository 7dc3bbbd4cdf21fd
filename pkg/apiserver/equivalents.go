package apiserver

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	admissionwebhook "github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/webhook"
	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// versionKey names a resource (or subresource) at all its versions.
type versionKey struct{ group, resource, subresource string }

// resourceVersions are the endpoints of each resource, at every version
// served, in the order of the group's versions.
type resourceVersions map[versionKey][]*Endpoint

func (rv resourceVersions) add(e *Endpoint) {
	k := versionKey{e.Resource.Group, e.Resource.Resource, e.Subresource}
	rv[k] = append(rv[k], e)
}

// storageKey names a stored resource (or a subresource of it), what
// rest.StoredGroupKind tells apart.
type storageKey struct {
	stored                schema.GroupKind
	resource, subresource string
}

// storageKeyOf is the storage key of the built-in endpoint e: a
// subresource's is that of its resource.
func (rv resourceVersions) storageKeyOf(e *Endpoint) storageKey {
	stored := rest.StoredGroupKind(e.Storage, e.Kind)
	if e.Subresource != "" {
		if main := rv[versionKey{e.Resource.Group, e.Resource.Resource, ""}]; len(main) > 0 {
			stored = rest.StoredGroupKind(main[0].Storage, main[0].Kind)
		}
	}
	return storageKey{stored: stored, resource: e.Resource.Resource, subresource: e.Subresource}
}

// sharedStorage indexes the endpoints of other groups by what they
// store: core and events.k8s.io events are one stored resource.
func (rv resourceVersions) sharedStorage() map[storageKey][]*Endpoint {
	out := map[storageKey][]*Endpoint{}
	for _, endpoints := range rv {
		for _, e := range endpoints {
			k := rv.storageKeyOf(e)
			out[k] = append(out[k], e)
		}
	}
	return out
}

// Equivalents implements admissionwebhook.Resources: the other versions
// of a resource (built-in or custom), and, as kube counts them, the
// versions of the resources of other groups that store the same objects
// (core and events.k8s.io events).
func (s *Server) Equivalents(resource schema.GroupVersionResource, subresource string) []admissionwebhook.Equivalent {
	k := versionKey{resource.Group, resource.Resource, subresource}
	endpoints := s.builtinVersions[k]
	if len(endpoints) > 0 {
		for _, e := range s.builtinShared[s.builtinVersions.storageKeyOf(endpoints[0])] {
			if e.Resource.Group != resource.Group {
				endpoints = append(slices.Clip(endpoints), e)
			}
		}
	} else if custom := s.customResources.versions.Load(); custom != nil {
		endpoints = (*custom)[k]
	}
	var out []admissionwebhook.Equivalent
	for _, e := range endpoints {
		if e.Resource == resource {
			continue
		}
		out = append(out, admissionwebhook.Equivalent{Resource: e.Resource, Kind: e.Kind, Convert: conversion.ForStorage(e.Storage)})
	}
	return out
}
