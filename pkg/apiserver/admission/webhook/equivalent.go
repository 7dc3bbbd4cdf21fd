package webhook

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
)

// Resources knows the versions at which the server serves a resource:
// what a webhook whose matchPolicy is Equivalent matches (kube's
// equivalent resources: the versions of one stored resource).
type Resources interface {
	// Equivalents lists the versions, other than resource's, at which
	// the objects of resource (and subresource) are served.
	Equivalents(resource schema.GroupVersionResource, subresource string) []Equivalent
}

// Equivalent is a version of a resource.
type Equivalent struct {
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
	// Convert converts an object of the resource, at any of its served
	// versions, to the kind to (without changing obj).
	Convert func(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)
}

// attrAt is the attributes of a request as a rule of another version of
// its resource sees them.
type attrAt struct {
	admission.Attributes
	resource schema.GroupVersionResource
}

func (a *attrAt) GetResource() schema.GroupVersionResource { return a.resource }

// matchEquivalent is the invocation of h at the first version of the
// request's resource one of its rules matches (rules in order), as kube
// tries them when the request's own version matches none; nil when none.
func (d *dispatcher) matchEquivalent(h *hook, attr admission.Attributes) (*invocation, *Equivalent) {
	resources := d.source.resources()
	if resources == nil {
		return nil, nil
	}
	equivalents := resources.Equivalents(attr.GetResource(), attr.GetSubresource())
	for _, r := range h.rules {
		for i := range equivalents {
			eq := &equivalents[i]
			if (&rules.Matcher{Rule: r, Attr: &attrAt{Attributes: attr, resource: eq.Resource}}).Matches() {
				return &invocation{resource: eq.Resource, subresource: attr.GetSubresource(), kind: eq.Kind}, eq
			}
		}
	}
	return nil, nil
}

// convertedAttributes are v's at the kind of eq: the objects converted
// (copies).
func convertedAttributes(v *admission.VersionedAttributes, eq *Equivalent) (*admission.VersionedAttributes, error) {
	out := &admission.VersionedAttributes{Attributes: v.Attributes, VersionedKind: eq.Kind}
	for _, o := range []struct {
		from runtime.Object
		to   *admission.LazyObject
	}{{v.VersionedObject.Object(), &out.VersionedObject}, {v.VersionedOldObject.Object(), &out.VersionedOldObject}} {
		if o.from == nil {
			continue
		}
		converted, err := eq.Convert(o.from.DeepCopyObject(), eq.Kind)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("unable to convert to %v: %w", eq.Kind, err))
		}
		*o.to = admission.NewLazyObject(withKind(converted, eq.Kind))
	}
	return out, nil
}
