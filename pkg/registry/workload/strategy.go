package workload

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Strategy is the strategy of a workload's main endpoint, to embed: a
// resource adds its Default, Validate, ValidateUpdate and warnings, and
// overrides what else it does differently. Workloads are namespaced.
type Strategy struct {
	generic.BaseStrategy
	apiVersion string
	gcPolicy   rest.GarbageCollectionPolicy
}

var (
	_ generic.Strategy                     = Strategy{}
	_ rest.ResetFieldsStrategy             = Strategy{}
	_ rest.GarbageCollectionDeleteStrategy = Strategy{}
)

// NewStrategy returns the strategy of a workload served at apiVersion
// ("apps/v1"), whose deletes default to gcPolicy ("" when the kind has no
// default: the client's choice, else the objects' finalizers, decide).
func NewStrategy(apiVersion string, gcPolicy rest.GarbageCollectionPolicy) Strategy {
	return Strategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}, apiVersion: apiVersion, gcPolicy: gcPolicy}
}

// APIVersion is the version the strategy's reset fields name.
func (s Strategy) APIVersion() string { return s.apiVersion }

// GetResetFields implements rest.ResetFieldsStrategy: the main endpoint
// does not change status.
func (s Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(s.apiVersion, "status")
}

// DefaultGarbageCollectionPolicy implements
// rest.GarbageCollectionDeleteStrategy: what happens to the pods (or
// replica sets, jobs) of a deleted workload when the client does not say.
func (s Strategy) DefaultGarbageCollectionPolicy(context.Context) rest.GarbageCollectionPolicy {
	return s.gcPolicy
}

// PrepareForCreate drops the status a client sent and starts the
// generation at 1.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.ResetStatus(obj)
	generic.StartGeneration(obj)
}

// PrepareForUpdate keeps the stored status and bumps the generation when
// the spec changed, and only then.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
	generic.BumpGenerationOnSpecChange(obj, old)
}

// Main is a workload's main strategy: a type that embeds Strategy.
type Main interface {
	generic.Strategy
	APIVersion() string
}

// StatusStrategy serves a workload's /status: only the status changes
// (and the generation does not move). It defaults, canonicalizes and is
// scoped as Main is, and warns about nothing.
type StatusStrategy struct {
	// Main is the resource's main strategy.
	Main Main
	// Validate validates an update of the status (nil: kube validates
	// nothing, as for cron jobs). It is the whole validation: the object
	// metadata's too, where the kind checks it.
	Validate func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// KeepLabels keeps metadata.labels too (deployments).
	KeepLabels bool
}

var (
	_ rest.RESTUpdateStrategy  = StatusStrategy{}
	_ rest.ResetFieldsStrategy = StatusStrategy{}
	_ rest.Defaulter           = StatusStrategy{}
)

// NamespaceScoped implements rest.RESTUpdateStrategy.
func (s StatusStrategy) NamespaceScoped() bool { return s.Main.NamespaceScoped() }

// AllowCreateOnUpdate implements rest.RESTUpdateStrategy.
func (s StatusStrategy) AllowCreateOnUpdate() bool { return s.Main.AllowCreateOnUpdate() }

// AllowUnconditionalUpdate implements rest.RESTUpdateStrategy.
func (s StatusStrategy) AllowUnconditionalUpdate() bool { return s.Main.AllowUnconditionalUpdate() }

// Canonicalize implements rest.RESTUpdateStrategy.
func (s StatusStrategy) Canonicalize(obj runtime.Object) { s.Main.Canonicalize(obj) }

// Default implements rest.Defaulter with Main's defaults, if it has any.
func (s StatusStrategy) Default(obj runtime.Object) {
	if d, ok := s.Main.(rest.Defaulter); ok {
		d.Default(obj)
	}
}

// GetResetFields implements rest.ResetFieldsStrategy: /status does not
// change spec, nor metadata.labels with KeepLabels.
func (s StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if s.KeepLabels {
		return generic.ResetFields(s.Main.APIVersion(), "spec", "metadata.labels")
	}
	return generic.ResetFields(s.Main.APIVersion(), "spec")
}

// PrepareForUpdate keeps everything of old but the status and metadata
// (and, with KeepLabels, metadata.labels too).
func (s StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepAllButStatus(obj, old)
	if s.KeepLabels {
		generic.KeepLabels(obj, old)
	}
}

// ValidateUpdate implements rest.RESTUpdateStrategy with Validate.
func (s StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if s.Validate == nil {
		return nil
	}
	return s.Validate(ctx, obj, old)
}

// WarningsOnUpdate implements rest.RESTUpdateStrategy: writes of status
// are not warned about.
func (StatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// NameWarnings warns that a workload's name, which its pods' names and
// hostnames start with, is not a DNS label (nil when it is), with kube's
// text.
func NameWarnings(name string) []string {
	if msgs := validation.IsDNS1123Label(name); len(msgs) != 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}
