package generic

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// SpecStrategy is the BaseStrategy of a kind whose status its /status
// subresource alone writes: a create clears the status a client sent
// (ResetStatus), an update keeps the stored one (KeepStatus). A strategy
// embeds it for these two and states the rest (its reset fields name the
// group version, which a zero value cannot know).
type SpecStrategy struct{ BaseStrategy }

// PrepareForCreate implements rest.RESTCreateStrategy.
func (SpecStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) { ResetStatus(obj) }

// PrepareForUpdate implements rest.RESTUpdateStrategy.
func (SpecStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	KeepStatus(obj, old)
}

// GenerationStrategy is SpecStrategy for a kind whose controllers report
// the generation they observed: metadata.generation starts at 1 and grows
// with each change of the spec (BumpGenerationOnSpecChange). A kind
// without a status (ingress classes, device classes) gets the generation
// alone: ResetStatus and KeepStatus leave it as it is.
type GenerationStrategy struct{ BaseStrategy }

// PrepareForCreate implements rest.RESTCreateStrategy.
func (GenerationStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ResetStatus(obj)
	StartGeneration(obj)
}

// PrepareForUpdate implements rest.RESTUpdateStrategy.
func (GenerationStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	KeepStatus(obj, old)
	BumpGenerationOnSpecChange(obj, old)
}
