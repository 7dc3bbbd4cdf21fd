// Package generic is the generic registry: Resource, the declaration of
// a served resource; the Store it builds, which serves the resource from a
// storage.Interface, specialised by its strategies and hooks, and never
// changes once built; the subresources served over a Store (status and
// the like, scale); the strategy helpers (ResetStatus, KeepStatus,
// KeepAllButStatus, SpecChanged, StartGeneration, BumpGeneration...); and
// the RESTOptions each Store is built from.
//
// It sits in the registry, below the API groups' folders, over storage
// (never etcd3 or the cacher: RESTOptions.Decorator builds each store).
//
// A resource is a Resource value and, where it needs one, a small
// strategy (pkg/registry/coordination/lease.go is the model). Everything
// the resource does besides is part of the declaration:
//
//	var widgets = generic.Resource{
//		Name: "widgets", Singular: "widget", Kind: "Widget", Namespaced: true,
//		New:            func() runtime.Object { return &examplev1.Widget{} },
//		NewList:        func() runtime.Object { return &examplev1.WidgetList{} },
//		Strategy:       widgetStrategy{generic.BaseStrategy{Namespaced: true}},
//		StatusStrategy: widgetStatusStrategy{...},  // serves widgets/status
//		Scale:          generic.WorkloadScale[*examplev1.Widget](), // widgets/scale
//		// Hooks run around the writes (reservations, what kube's
//		// mutating admission adds); Destroy releases what they hold.
//		Hooks:   generic.Hooks{BeginCreate: reserve, AfterDelete: release},
//		Destroy: closeReservations,
//		// Further storages over the Store, by path.
//		Subresources: map[string]generic.SubresourceFunc{
//			"widgets/approval": generic.UpdateSubresource(widgetApprovalStrategy{}),
//			"widgets/eviction": func(s *generic.Store) (rest.Storage, error) { return &evictionREST{store: s}, nil },
//		},
//	}
//
// A provider lists its resources with BuildGroup, or installs them one by
// one (Resource.Install) when it hands typed handles of some to the
// server's wiring, as the core group does (core.LegacyRESTStorage).
package generic
