package workload

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Strategy is the strategy of a workload's main endpoint, to embed: a
// resource adds its Default, Validate, ValidateUpdate and warnings, and
// overrides what else it does differently. Workloads are namespaced, and
// their controllers report the generation they saw: GenerationStrategy
// resets and keeps the status and counts the generation.
type Strategy struct {
	generic.GenerationStrategy
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
	return Strategy{GenerationStrategy: generic.GenerationStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}, apiVersion: apiVersion, gcPolicy: gcPolicy}
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

// NameWarnings warns that a workload's name, which its pods' names and
// hostnames start with, is not a DNS label (nil when it is), with kube's
// text.
func NameWarnings(name string) []string {
	if msgs := validation.IsDNS1123Label(name); len(msgs) != 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}
