package generic

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// StatusStrategy serves a resource's /status the way most of kube's do:
// only the status changes, and the endpoint is otherwise its main
// strategy (scope, defaults, canonical form, create and unconditional
// update rules, pending finalizers). A resource declares one in its
// Resource instead of a type of its own; what differs per kind (extra
// keeping, validation, warnings) is given as funcs.
type StatusStrategy struct {
	// Main is the resource's main strategy.
	Main rest.RESTUpdateStrategy
	// GroupVersion names the reset fields ("v1", "storage.k8s.io/v1").
	GroupVersion string
	// KeepMetadata keeps the metadata a status writer may not change
	// (PrepareStatusUpdate: labels, annotations, finalizers, owners) and
	// resets "metadata" with "spec". Without it, metadata changes as on
	// the main endpoint and only "spec" is reset.
	KeepMetadata bool
	// KeepLabels, without KeepMetadata, keeps (and resets) metadata.labels
	// alone (deployments).
	KeepLabels bool
	// Prepare runs after the rest of the object is kept: what the kind
	// drops or stamps in its status (nil: nothing).
	Prepare func(obj, old runtime.Object)
	// Validate validates the update (nil: nothing). It is the whole
	// validation: the metadata's too, where the kind checks it.
	Validate func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// Warnings warns about the update (nil: no warnings).
	Warnings func(ctx context.Context, obj, old runtime.Object) []string
}

var (
	_ rest.RESTUpdateStrategy        = StatusStrategy{}
	_ rest.ResetFieldsStrategy       = StatusStrategy{}
	_ rest.Defaulter                 = StatusStrategy{}
	_ rest.PendingFinalizersStrategy = StatusStrategy{}
)

// NamespaceScoped implements rest.RESTUpdateStrategy.
func (s StatusStrategy) NamespaceScoped() bool { return s.Main.NamespaceScoped() }

// AllowCreateOnUpdate implements rest.RESTUpdateStrategy.
func (s StatusStrategy) AllowCreateOnUpdate() bool { return s.Main.AllowCreateOnUpdate() }

// AllowUnconditionalUpdate implements rest.RESTUpdateStrategy.
func (s StatusStrategy) AllowUnconditionalUpdate() bool { return s.Main.AllowUnconditionalUpdate() }

// Canonicalize implements rest.RESTUpdateStrategy.
func (s StatusStrategy) Canonicalize(obj runtime.Object) { s.Main.Canonicalize(obj) }

// Default implements rest.Defaulter with Main's defaults, if it has any:
// a status write is defaulted as any write of the kind is.
func (s StatusStrategy) Default(obj runtime.Object) {
	if d, ok := s.Main.(rest.Defaulter); ok {
		d.Default(obj)
	}
}

// FinalizersPending implements rest.PendingFinalizersStrategy as Main
// does (false when it has no finalizers of its own): a status write must
// not delete an object the main endpoint would not (namespaces).
func (s StatusStrategy) FinalizersPending(obj runtime.Object) bool {
	p, ok := s.Main.(rest.PendingFinalizersStrategy)
	return ok && p.FinalizersPending(obj)
}

// GetResetFields implements rest.ResetFieldsStrategy: /status does not
// change spec, nor what else it keeps.
func (s StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	switch {
	case s.KeepMetadata:
		return ResetFields(s.GroupVersion, "metadata", "spec")
	case s.KeepLabels:
		return ResetFields(s.GroupVersion, "spec", "metadata.labels")
	}
	return ResetFields(s.GroupVersion, "spec")
}

// PrepareForUpdate keeps everything of old but the status (and the
// metadata or labels, as configured), then runs Prepare.
func (s StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	switch {
	case s.KeepMetadata:
		PrepareStatusUpdate(obj, old)
	case s.KeepLabels:
		KeepAllButStatus(obj, old)
		KeepLabels(obj, old)
	default:
		KeepAllButStatus(obj, old)
	}
	if s.Prepare != nil {
		s.Prepare(obj, old)
	}
}

// ValidateUpdate implements rest.RESTUpdateStrategy with Validate.
func (s StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if s.Validate == nil {
		return nil
	}
	return s.Validate(ctx, obj, old)
}

// WarningsOnUpdate implements rest.RESTUpdateStrategy with Warnings.
func (s StatusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	if s.Warnings == nil {
		return nil
	}
	return s.Warnings(ctx, obj, old)
}
