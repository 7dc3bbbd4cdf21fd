// Package customresource builds what serving the custom resources of a
// CustomResourceDefinition takes: one generic.Resource at the storage
// version, whose Store keeps every object of the kind (kube's key layout,
// /registry/<group>/<plural>/..., one watch cache), served at the other
// versions as generic.VersionedStores converting through the
// definition's conversion (a conversion.Registry with the storage version
// as hub). The rules are kube's, from the libraries they live in
// (k8s.io/apiextensions-apiserver's schema, validation, pruning,
// defaulting and CEL packages): this package only puts them where the
// generic registry calls them.
//
// It sits in the registry, over generic and conversion.
package customresource

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhookclient"
)

// resource is what the storages of one definition share: its names, its
// versions' schemas and its conversion.
type resource struct {
	group, plural, singular, kind, listKind string
	shortNames, categories                  []string
	namespaced                              bool
	preserveUnknownFields                   bool
	versions                                map[string]*version
	storage                                 *version
	converter                               *conversion.Registry
	// webhook is the conversion webhook's client (nil: conversion None).
	webhook *webhookConverter
	// selectable are the selectable fields of every version, by name
	// ("spec.color").
	selectable map[string]*jsonpath.JSONPath
	// terminating refuses creates once the definition is being deleted.
	terminating atomic.Bool
	// warnings are what requests to deprecated versions are warned, by
	// version.
	warnings map[string]string
}

// Served is what a definition serves: its group's versions with their
// storages, over one Store.
type Served struct {
	// Group lists the served versions, preferred first, and their
	// storages ("<plural>", "<plural>/status", "<plural>/scale").
	Group rest.APIGroupInfo
	// Store keeps every object, at the storage version: what deleting
	// the definition deletes.
	Store *generic.Store
	// Descriptions are what the OpenAPI documents say of the served
	// versions, made on first use.
	Descriptions func() []Description
	r            *resource
}

// Terminating reports that creates fail (SetTerminating).
func (s *Served) Terminating() bool { return s.r.terminating.Load() }

// Resource is the resource served (the accepted plural).
func (s *Served) Resource() string { return s.r.plural }

// Kind is the kind of the objects served.
func (s *Served) Kind() string { return s.r.kind }

// SetTerminating makes creates fail (the definition is being deleted)
// or succeed again.
func (s *Served) SetTerminating(terminating bool) { s.r.terminating.Store(terminating) }

// Destroy releases the Store (its watch cache; the other storages are
// views of it) and the webhook's connections.
func (s *Served) Destroy() {
	s.Store.Destroy()
	if s.r.webhook != nil {
		s.r.webhook.client.Close()
	}
}

// Build builds what crd serves, under its accepted names, from getter's
// options (the key prefix of the group and plural); a conversion webhook
// served by a service is found through resolver.
func Build(crd *apiextensionsv1.CustomResourceDefinition, getter generic.RESTOptionsGetter, resolver webhookclient.ServiceResolver) (*Served, error) {
	r, err := newResource(crd, resolver)
	if err != nil {
		return nil, err
	}
	decl := r.declaration()
	gv := r.storage.gvk.GroupVersion()
	info := rest.APIGroupInfo{GroupName: r.group, VersionedResourcesStorageMap: map[string]map[string]rest.Storage{}}
	var store *generic.Store
	if r.storage.served {
		resources := map[string]rest.Storage{}
		if store, err = decl.Install(gv, getter, resources); err != nil {
			return nil, err
		}
		info.VersionedResourcesStorageMap[gv.Version] = resources
	} else if store, err = decl.Build(gv, getter); err != nil {
		return nil, err
	}
	served := &Served{Group: info, Store: store, Descriptions: sync.OnceValue(r.describe), r: r}
	for _, v := range r.versions {
		if !v.served {
			continue
		}
		if !v.storage {
			resources, err := r.installVersion(store, v)
			if err != nil {
				store.Destroy()
				return nil, err
			}
			info.VersionedResourcesStorageMap[v.name] = resources
		}
		served.Group.PrioritizedVersions = append(served.Group.PrioritizedVersions, v.name)
	}
	sort.Slice(served.Group.PrioritizedVersions, func(i, j int) bool {
		return utilversion.CompareKubeAwareVersionStrings(served.Group.PrioritizedVersions[i], served.Group.PrioritizedVersions[j]) > 0
	})
	return served, nil
}

func newResource(crd *apiextensionsv1.CustomResourceDefinition, resolver webhookclient.ServiceResolver) (*resource, error) {
	names := crd.Status.AcceptedNames
	if names.Kind == "" || names.Plural == "" || names.ListKind == "" {
		return nil, fmt.Errorf("customresource: %s has no accepted names", crd.Name)
	}
	r := &resource{
		group: crd.Spec.Group, plural: names.Plural, singular: names.Singular, kind: names.Kind, listKind: names.ListKind,
		shortNames: names.ShortNames, categories: names.Categories,
		namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, preserveUnknownFields: crd.Spec.PreserveUnknownFields,
		warnings: deprecationWarnings(crd),
		versions: map[string]*version{},
	}
	if r.singular == "" {
		r.singular = r.plural
	}
	for _, v := range crd.Spec.Versions {
		pv, err := newVersion(crd, v)
		if err != nil {
			return nil, fmt.Errorf("customresource: %s: %w", crd.Name, err)
		}
		r.versions[v.Name] = pv
		if v.Storage {
			r.storage = pv
		}
	}
	if r.storage == nil {
		return nil, fmt.Errorf("customresource: %s has no storage version", crd.Name)
	}
	if err := r.prepareSelectable(); err != nil {
		return nil, fmt.Errorf("customresource: %s: %w", crd.Name, err)
	}
	conv, err := r.newConverter(crd, resolver)
	if err != nil {
		return nil, fmt.Errorf("customresource: %s: %w", crd.Name, err)
	}
	r.converter = conv
	return r, nil
}

// declaration is the Resource of the Store, at the storage version.
func (r *resource) declaration() generic.Resource {
	v := r.storage
	decl := generic.Resource{
		Name: r.plural, Singular: r.singular, Kind: r.kind, Namespaced: r.namespaced,
		ShortNames: r.shortNames, Categories: r.categories,
		New:                  newObject(v.gvk),
		NewList:              newList(v.gvk.GroupVersion().WithKind(r.listKind)),
		Strategy:             newStrategy(r, v),
		Hooks:                generic.Hooks{BeginCreate: r.refuseWhileTerminating},
		AttrFunc:             r.attrs,
		FieldLabelConversion: r.fieldLabels(v),
		Table:                r.table(v),
		Normalize:            r.normalize,
		Structure: &rest.Structure{
			TypeConverter: r.structure(),
			Convertor:     copyingConvertor{r.converter.ObjectConvertor(runtime.UnsafeObjectConvertor(api.Scheme()))},
		},
	}
	if v.hasStatus() {
		decl.StatusStrategy = statusStrategy{newStrategy(r, v)}
	}
	if v.hasScale() {
		decl.Scale = r.scaleAccessor(v)
	}
	return decl
}

// installVersion serves v over store, which keeps the objects at the
// storage version.
func (r *resource) installVersion(store *generic.Store, v *version) (map[string]rest.Storage, error) {
	resources := map[string]rest.Storage{}
	gen := generic.Version{
		Kind:                 v.gvk,
		New:                  newObject(v.gvk),
		NewList:              newList(v.gvk.GroupVersion().WithKind(r.listKind)),
		Converter:            r,
		Defaults:             func(obj runtime.Object) { r.applyDefaults(obj.(*unstructured.Unstructured).Object) },
		Strategy:             newStrategy(r, v),
		FieldLabelConversion: r.fieldLabels(v),
		Table:                r.table(v),
	}
	var status *generic.StatusREST
	if v.hasStatus() {
		status = generic.NewStatusREST(store, statusStrategy{newStrategy(r, v)})
	}
	if err := generic.InstallVersion(resources, r.plural, store, status, gen); err != nil {
		return nil, err
	}
	if v.hasScale() {
		resources[r.plural+"/scale"] = generic.NewScaleREST(store, *r.scaleAccessor(v))
	}
	return resources, nil
}

// newObject makes the empty objects of kind: unstructured, naming their
// kind (which is how they tell it).
func newObject(kind schema.GroupVersionKind) func() runtime.Object {
	return func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kind)
		return u
	}
}

// newList makes the empty lists of listKind.
func newList(listKind schema.GroupVersionKind) func() runtime.Object {
	return func() runtime.Object {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(listKind)
		return l
	}
}

// refuseWhileTerminating is kube's answer to a create once the definition
// is being deleted.
func (r *resource) refuseWhileTerminating(context.Context, runtime.Object, *metav1.CreateOptions) (generic.FinishFunc, error) {
	if r.terminating.Load() {
		err := apierrors.NewMethodNotSupported(schema.GroupResource{Group: r.group, Resource: r.plural}, "create")
		err.ErrStatus.Message = "create not allowed while custom resource definition is terminating"
		return nil, err
	}
	return func(context.Context, bool) {}, nil
}

// at returns obj, an object of the storage version, at version v (a
// copy, unless v is the storage version).
func (r *resource) at(v *version, obj runtime.Object) (*unstructured.Unstructured, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("customresource: %T is not unstructured", obj)
	}
	if u.GetAPIVersion() == v.gvk.GroupVersion().String() {
		return u, nil
	}
	out, err := r.Convert(u.DeepCopy(), v.gvk)
	if err != nil {
		return nil, err
	}
	return out.(*unstructured.Unstructured), nil
}

// bothAt returns an update's object and the stored one at version v, or
// the validation error a failed conversion is to the client (an
// internal one).
func (r *resource) bothAt(v *version, obj, old runtime.Object) (u, oldU *unstructured.Unstructured, errs field.ErrorList) {
	u, err := r.at(v, obj)
	if err == nil {
		oldU, err = r.at(v, old)
	}
	if err != nil {
		return nil, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	return u, oldU, nil
}

// pruneRequest drops from a request's object what the schema of its
// version does not declare, and returns the paths dropped.
func (r *resource) pruneRequest(obj runtime.Object) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	return r.coerce(u.Object, coerceOptions{reportUnknown: true})
}

// resetFields is the set of top-level fields at paths, at every version
// with a status subresource (none without one).
func (r *resource) resetFields(paths ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	out := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, v := range r.versions {
		if !v.hasStatus() {
			continue
		}
		for apiVersion, set := range generic.ResetFields(v.gvk.GroupVersion().String(), paths...) {
			out[apiVersion] = set
		}
	}
	return out
}

// normalize gives an object read from storage the form the definition
// serves today, as kube's storage codec decodes custom resources: its
// metadata checked, what its version's schema does not declare pruned,
// that schema's defaults applied, and converted to the storage version
// when it was stored at another. It returns data itself when nothing
// changes.
func (r *resource) normalize(data []byte) ([]byte, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	if _, err := r.coerce(u.Object, coerceOptions{dropInvalidMetadata: true}); err != nil {
		return nil, err
	}
	r.applyDefaults(u.Object)
	if u.GetAPIVersion() != r.storage.gvk.GroupVersion().String() {
		converted, err := r.Convert(u, r.storage.gvk)
		if err != nil {
			return nil, err
		}
		u = converted.(*unstructured.Unstructured)
	}
	out, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(out), data) {
		return data, nil
	}
	return out, nil
}
