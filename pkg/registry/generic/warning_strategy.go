package generic

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// WarningStrategy is the BaseStrategy of a kind that warns about an
// update as about a create: about the object written alone, whatever it
// was before (kube repeats such warnings on every write). A strategy
// embeds it in place of BaseStrategy (embedding both would make each
// warning method ambiguous, and so neither).
type WarningStrategy[T runtime.Object] struct {
	BaseStrategy
	warnings func(T) []string
}

// NewWarningStrategy is the WarningStrategy of a kind, namespaced or not,
// whose objects warnings warns about.
func NewWarningStrategy[T runtime.Object](namespaced bool, warnings func(T) []string) WarningStrategy[T] {
	return WarningStrategy[T]{BaseStrategy: BaseStrategy{Namespaced: namespaced}, warnings: warnings}
}

// WarningsOnCreate implements rest.RESTCreateStrategy.
func (s WarningStrategy[T]) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return s.warnings(obj.(T))
}

// WarningsOnUpdate implements rest.RESTUpdateStrategy.
func (s WarningStrategy[T]) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return s.warnings(obj.(T))
}
