package admission

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// RESTMapping is a resource serving a kind, as an owner reference's
// permission is checked on it.
type RESTMapping struct {
	Resource   schema.GroupVersionResource
	Namespaced bool
}

// KindMapper finds the resources serving a kind at a version, built-in
// or custom, as kube's discovery RESTMapper does (its errors are
// meta.NoKindMatchError's).
type KindMapper interface {
	RESTMappings(gk schema.GroupKind, version string) ([]RESTMapping, error)
}

// OwnerReferencesPermissionEnforcement is kube's plugin of that name:
// changing an object's owner references takes the right to delete it,
// and making a reference block its owner's deletion takes the right to
// update the owner's finalizers (the garbage collector would otherwise
// hold an object its requester may not touch).
type OwnerReferencesPermissionEnforcement struct {
	Authorizer authorizer.Authorizer
	// Mapper is set once the server's routes are built, before it serves.
	Mapper KindMapper
}

// Validate implements handlers.Admission.
func (p *OwnerReferencesPermissionEnforcement) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Create && a.Operation != handlers.Update {
		return nil
	}
	// Old kubelets write pods/status with references they do not keep;
	// the status strategy keeps them instead.
	if a.Resource.GroupResource() == podsResource && a.Subresource == "status" {
		return nil
	}
	if !changesOwnerReferences(obj, a.Old) {
		return nil
	}
	u, _ := request.UserFrom(ctx)
	// Whoever creates an object could as well not have: no right is
	// needed to set its references, but blocking an owner's deletion is
	// checked below all the same.
	if a.Operation != handlers.Create {
		decision, reason, err := p.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
			User: u, Verb: "delete", Namespace: a.Namespace, APIGroup: a.Resource.Group, APIVersion: a.Resource.Version,
			Resource: a.Resource.Resource, Subresource: a.Subresource, Name: a.Name, ResourceRequest: true,
		})
		if decision != authorizer.DecisionAllow {
			return forbidden(a, fmt.Errorf("cannot set an ownerRef on a resource you can't delete: %v, %v", reason, err))
		}
	}
	refs := newBlockingRefs(obj, a.Old)
	if len(refs) == 0 {
		return nil
	}
	// One check first that passes whoever may finalize anything, as
	// kube's: no mapping needed then.
	if decision, _, _ := p.Authorizer.Authorize(ctx, finalizeAnything(u)); decision == authorizer.DecisionAllow {
		return nil
	}
	for _, ref := range refs {
		if err := p.mayFinalize(ctx, a, u, ref); err != nil {
			return err
		}
	}
	return nil
}

// mayFinalize checks that u may update the finalizers of ref's owner,
// under every resource its kind maps to.
func (p *OwnerReferencesPermissionEnforcement) mayFinalize(ctx context.Context, a handlers.Attributes, u user.Info, ref metav1.OwnerReference) error {
	mappings, err := p.mappings(ref)
	if err != nil {
		return forbidden(a, fmt.Errorf("cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion %s Kind %s: %v", ref.APIVersion, ref.Kind, err))
	}
	for _, m := range mappings {
		record := authorizer.AttributesRecord{
			User: u, Verb: "update", APIGroup: m.Resource.Group, APIVersion: m.Resource.Version, Resource: m.Resource.Resource,
			Subresource: "finalizers", Name: ref.Name, ResourceRequest: true,
		}
		if m.Namespaced {
			record.Namespace = a.Namespace // an owner is in its dependent's namespace
		}
		if decision, reason, err := p.Authorizer.Authorize(ctx, record); decision != authorizer.DecisionAllow {
			return forbidden(a, fmt.Errorf("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: %v, %v", reason, err))
		}
	}
	return nil
}

func (p *OwnerReferencesPermissionEnforcement) mappings(ref metav1.OwnerReference) ([]RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	return p.Mapper.RESTMappings(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
}

func finalizeAnything(u user.Info) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: "update", APIGroup: "*", APIVersion: "*", Resource: "*",
		Subresource: "finalizers", Name: "*", ResourceRequest: true}
}

// changesOwnerReferences reports whether obj's references differ from
// old's (any reference, on a create).
func changesOwnerReferences(obj, old runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if old == nil {
		return len(m.GetOwnerReferences()) > 0
	}
	o, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	return !apiequality.Semantic.DeepEqual(o.GetOwnerReferences(), m.GetOwnerReferences())
}

// newBlockingRefs are obj's references that block their owner's
// deletion and did not in old (by UID).
func newBlockingRefs(obj, old runtime.Object) []metav1.OwnerReference {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	was := map[types.UID]metav1.OwnerReference{}
	if old != nil {
		if o, err := meta.Accessor(old); err == nil {
			for _, ref := range o.GetOwnerReferences() {
				was[ref.UID] = ref
			}
		}
	}
	var out []metav1.OwnerReference
	for _, ref := range m.GetOwnerReferences() {
		if !blocks(ref) {
			continue
		}
		if before, ok := was[ref.UID]; !ok || !blocks(before) {
			out = append(out, ref)
		}
	}
	return out
}

func blocks(ref metav1.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}
