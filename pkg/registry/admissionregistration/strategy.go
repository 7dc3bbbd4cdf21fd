package admissionregistration

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// configStrategy is what kube's strategies of this group share: the
// generation starts at 1 and follows the configuration, every update
// names the resourceVersion it read, and names ending in ".static.k8s.io"
// belong to configurations loaded from files at startup (refused on
// create, warned about on update).
type configStrategy struct{ generic.BaseStrategy }

func (configStrategy) AllowUnconditionalUpdate() bool { return false }

// specStrategy is the strategy of the policies and their bindings: the
// generation follows the spec; status, where a kind has one, is kept
// from the main endpoint.
type specStrategy struct {
	configStrategy
	setDefaults func(runtime.Object)
	// validate validates obj, created (old nil) or replacing old.
	validate func(obj, old runtime.Object) field.ErrorList
}

// Default implements rest.Defaulter.
func (s specStrategy) Default(obj runtime.Object) { s.setDefaults(obj) }

func (specStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.ResetStatus(obj)
	generic.StartGeneration(obj)
}

func (specStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
	generic.BumpGenerationOnSpecChange(obj, old)
}

func (s specStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return append(s.validate(obj, nil), validateStaticSuffix(obj)...)
}

func (s specStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validate(obj, old)
}

func (specStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return staticSuffixWarnings(obj)
}

// staticSuffix is kube's reserved suffix of manifest-based admission
// configurations.
const staticSuffix = ".static.k8s.io"

func staticSuffixMessage() string {
	return fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticSuffix)
}

// validateStaticSuffix is the create-time check of the reserved suffix.
func validateStaticSuffix(obj runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil || !strings.HasSuffix(m.GetName(), staticSuffix) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), m.GetName(), staticSuffixMessage())}
}

// staticSuffixWarnings is the update-time warning about the suffix.
func staticSuffixWarnings(obj runtime.Object) []string {
	m, err := meta.Accessor(obj)
	if err != nil || !strings.HasSuffix(m.GetName(), staticSuffix) {
		return nil
	}
	return []string{"metadata.name: " + staticSuffixMessage()}
}

// objectMeta returns the metadata of an object of this group's kinds.
func objectMeta(obj runtime.Object) *metav1.ObjectMeta {
	return obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}
