package rbac

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// guard is what the stores of roles and bindings share to prevent
// privilege escalation, as kube's policy-based storages: a user may only
// grant what it holds, unless it is a superuser (system:masters) or is
// explicitly allowed to (escalate on roles, bind on the role a binding
// refers to).
type guard struct {
	authorizer authorizer.Authorizer
	resolver   *rbacrules.Resolver
}

// escalationAllowed reports whether the user of ctx is a superuser: the
// system:masters group, which the server's own writes use too.
func escalationAllowed(ctx context.Context) bool {
	u, ok := request.UserFrom(ctx)
	return ok && slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup)
}

// authorized asks the server's authorizer about verb on a role, for the
// user of ctx.
func (g *guard) authorized(ctx context.Context, verb, resource, namespace, name string) bool {
	if g.authorizer == nil {
		return false
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return false
	}
	attrs := authorizer.AttributesRecord{
		User: u, Verb: verb, APIGroup: rbacv1.GroupName, APIVersion: "*",
		Resource: resource, Namespace: namespace, Name: name, ResourceRequest: true,
	}
	decision, _, err := g.authorizer.Authorize(ctx, attrs)
	if err != nil {
		slog.Warn("rbac: authorizing a role or binding write", "user", u.GetName(), "verb", verb, "resource", resource, "error", err)
	}
	return decision == authorizer.DecisionAllow
}

// escalateAuthorized reports whether the request of ctx (a write of a
// role or cluster role) may escalate: kube asks with the request's own
// resource, namespace and name.
func (g *guard) escalateAuthorized(ctx context.Context) bool {
	info, ok := request.InfoFrom(ctx)
	if !ok || info.APIGroup != rbacv1.GroupName || (info.Resource != "roles" && info.Resource != "clusterroles") {
		return false
	}
	return g.authorized(ctx, "escalate", info.Resource, info.Namespace, info.Name)
}

// bindAuthorized reports whether the user of ctx may bind ref in
// namespace ("" for a ClusterRoleBinding).
func (g *guard) bindAuthorized(ctx context.Context, ref rbacv1.RoleRef, namespace string) bool {
	var resource string
	switch ref.Kind {
	case "ClusterRole":
		resource = "clusterroles"
	case "Role":
		resource = "roles"
	default:
		return false
	}
	if ref.APIGroup != rbacv1.GroupName {
		return false
	}
	return g.authorized(ctx, "bind", resource, namespace, ref.Name)
}

// checkedUpdate runs check on the object an update computes, unless the
// update only changes what the garbage collector changes.
type checkedUpdate struct {
	rest.UpdatedObjectInfo
	check func(ctx context.Context, obj, old runtime.Object) error
}

func (u checkedUpdate) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := u.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	if onlyGCFieldsChanged(obj, old) {
		return obj, nil
	}
	if err := u.check(ctx, obj, old); err != nil {
		return nil, err
	}
	return obj, nil
}

// onlyGCFieldsChanged reports whether obj differs from old only in owner
// references, finalizers and managed fields: kube lets anyone who may
// update the object make those changes, so that garbage collection works.
func onlyGCFieldsChanged(obj, old runtime.Object) bool {
	if old == nil || reflect.ValueOf(old).IsNil() {
		return false
	}
	c := obj.DeepCopyObject()
	cm, err := meta.Accessor(c)
	if err != nil {
		return false
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetSelfLink(om.GetSelfLink())
	cm.SetManagedFields(om.GetManagedFields())
	return apiequality.Semantic.DeepEqual(c, old)
}

// fullAuthority is what a user needs to set an aggregation rule, which may
// gather any permission.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// roleStore is the store of roles or cluster roles, guarded.
type roleStore struct {
	*generic.Store
	guard
	// resource names the resource in a refusal.
	resource schema.GroupResource
	// rules returns the rules of a role; aggregated whether it has an
	// aggregation rule (cluster roles only).
	rules      func(obj runtime.Object) []rbacv1.PolicyRule
	aggregated func(obj runtime.Object) bool
}

// Create implements rest.Creater.
func (s *roleStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return s.CreateMutating(ctx, obj, nil, createValidation, options)
}

// CreateMutating implements rest.MutatingCreater: the role is checked
// before its mutating admission, as before the Store's.
func (s *roleStore) CreateMutating(ctx context.Context, obj runtime.Object, mutate rest.MutateObjectFunc, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	if !escalationAllowed(ctx) && !s.escalateAuthorized(ctx) {
		if err := s.check(ctx, obj, nil); err != nil {
			return nil, err
		}
	}
	return s.Store.CreateMutating(ctx, obj, mutate, createValidation, options)
}

// Update implements rest.Updater.
func (s *roleStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if !escalationAllowed(ctx) && !s.escalateAuthorized(ctx) {
		objInfo = rest.WithUpdateMutation(checkedUpdate{UpdatedObjectInfo: objInfo, check: s.check}, rest.MutationOf(objInfo))
	}
	return s.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// check refuses a role that grants more than its writer holds; setting
// or changing an aggregation rule takes every permission.
func (s *roleStore) check(ctx context.Context, obj, old runtime.Object) error {
	name := nameOf(obj)
	if err := rbacrules.ConfirmNoEscalation(ctx, s.resolver, s.rules(obj)); err != nil {
		return apierrors.NewForbidden(s.resource, name, err)
	}
	if s.aggregated != nil && (s.aggregated(obj) || (old != nil && s.aggregated(old))) {
		if err := rbacrules.ConfirmNoEscalation(ctx, s.resolver, fullAuthority); err != nil {
			return apierrors.NewForbidden(s.resource, name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
	}
	return nil
}

// bindingStore is the store of role or cluster role bindings, guarded.
type bindingStore struct {
	*generic.Store
	guard
	resource schema.GroupResource
	roleRef  func(obj runtime.Object) rbacv1.RoleRef
}

// Create implements rest.Creater.
func (s *bindingStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return s.CreateMutating(ctx, obj, nil, createValidation, options)
}

// CreateMutating implements rest.MutatingCreater: the binding is
// checked before its mutating admission, as before the Store's.
func (s *bindingStore) CreateMutating(ctx context.Context, obj runtime.Object, mutate rest.MutateObjectFunc, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	if !escalationAllowed(ctx) {
		// The roleRef's group is defaulted first, as kube's decoder does.
		s.Store.Default(obj)
		if err := s.check(ctx, obj, nil); err != nil {
			return nil, err
		}
	}
	return s.Store.CreateMutating(ctx, obj, mutate, createValidation, options)
}

// Update implements rest.Updater.
func (s *bindingStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if !escalationAllowed(ctx) {
		objInfo = rest.WithUpdateMutation(checkedUpdate{UpdatedObjectInfo: objInfo, check: func(ctx context.Context, obj, old runtime.Object) error {
			s.Store.Default(obj)
			return s.check(ctx, obj, old)
		}}, rest.MutationOf(objInfo))
	}
	return s.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// check refuses a binding to a role its writer may not bind and whose
// permissions it does not hold. A role that does not exist is an error
// (kube's NotFound).
func (s *bindingStore) check(ctx context.Context, obj, _ runtime.Object) error {
	ns := request.NamespaceValue(ctx)
	ref := s.roleRef(obj)
	if s.bindAuthorized(ctx, ref, ns) {
		return nil
	}
	rules, err := s.resolver.GetRoleReferenceRules(ctx, ref, ns)
	if err != nil {
		return err
	}
	if err := rbacrules.ConfirmNoEscalation(ctx, s.resolver, rules); err != nil {
		return apierrors.NewForbidden(s.resource, nameOf(obj), err)
	}
	return nil
}

func nameOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetName()
	}
	return ""
}
