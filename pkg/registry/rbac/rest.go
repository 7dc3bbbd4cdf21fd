// Package rbac serves the rbac.authorization.k8s.io group (v1): roles,
// cluster roles and their bindings, with kube's validation and its
// prevention of privilege escalation on writes. The objects feed the
// policy cache (package policy) the RBAC authorizer decides with; the
// bootstrap policy (package bootstrap) is reconciled into them at start.
package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/policy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of rbac.authorization.k8s.io.
type RESTStorageProvider struct {
	// Authorizer is the server's authorizer, asked whether a user may
	// escalate (write a role granting more than it holds) or bind (refer
	// to a role it does not hold). nil: only holding the permissions, or
	// being in system:masters, allows a write.
	Authorizer authorizer.Authorizer
	// Policy is the cache of roles and bindings a writer's permissions are
	// resolved from (nil: an empty one, for a provider only inspected).
	Policy *policy.Cache
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return rbacv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	info, err := generic.BuildGroup(rbacv1.SchemeGroupVersion, getter, clusterRoleBindings, clusterRoles, roleBindings, roles)
	if err != nil {
		return info, err
	}
	storages := info.VersionedResourcesStorageMap["v1"]
	cache := p.Policy
	if cache == nil {
		cache = policy.NewCache()
	}
	// The roles a write grants or refers to are read from the stores, as
	// kube does, so that a role just created can be bound at once; the
	// writer's own bindings come from the cache.
	g := guard{authorizer: p.Authorizer, resolver: policy.NewResolver(cache, storeRoles{
		roles:        storages["roles"].(rest.Getter),
		clusterRoles: storages["clusterroles"].(rest.Getter),
	})}
	storages["roles"] = &roleStore{Store: storages["roles"].(*generic.Store), guard: g,
		rules: func(obj runtime.Object) []rbacv1.PolicyRule { return obj.(*rbacv1.Role).Rules }}
	storages["clusterroles"] = &roleStore{Store: storages["clusterroles"].(*generic.Store), guard: g,
		rules:      func(obj runtime.Object) []rbacv1.PolicyRule { return obj.(*rbacv1.ClusterRole).Rules },
		aggregated: hasAggregationRule}
	storages["rolebindings"] = &bindingStore{Store: storages["rolebindings"].(*generic.Store), guard: g,
		roleRef: func(obj runtime.Object) rbacv1.RoleRef { return obj.(*rbacv1.RoleBinding).RoleRef }}
	storages["clusterrolebindings"] = &bindingStore{Store: storages["clusterrolebindings"].(*generic.Store), guard: g,
		roleRef: func(obj runtime.Object) rbacv1.RoleRef { return obj.(*rbacv1.ClusterRoleBinding).RoleRef }}
	return info, nil
}

func hasAggregationRule(obj runtime.Object) bool {
	r := obj.(*rbacv1.ClusterRole)
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

// PolicySources returns the stores of info (built by this provider) that
// the policy cache follows.
func PolicySources(info rest.APIGroupInfo) policy.Sources {
	s := info.VersionedResourcesStorageMap["v1"]
	return policy.Sources{
		Roles:               s["roles"].(policy.Source),
		ClusterRoles:        s["clusterroles"].(policy.Source),
		RoleBindings:        s["rolebindings"].(policy.Source),
		ClusterRoleBindings: s["clusterrolebindings"].(policy.Source),
	}
}

// storeRoles reads roles from their stores (the latest state). As in
// kube, whose stores name the resource of the request in their errors, a
// missing role is reported as a missing object of the resource written
// ("rolebindings.rbac.authorization.k8s.io \"admin\" not found").
type storeRoles struct {
	roles, clusterRoles rest.Getter
}

func (s storeRoles) GetRole(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	obj, err := s.roles.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, asRequestResource(ctx, err, name)
	}
	return obj.(*rbacv1.Role), nil
}

func (s storeRoles) GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	obj, err := s.clusterRoles.Get(request.WithNamespace(ctx, ""), name, &metav1.GetOptions{})
	if err != nil {
		return nil, asRequestResource(ctx, err, name)
	}
	return obj.(*rbacv1.ClusterRole), nil
}

func asRequestResource(ctx context.Context, err error, name string) error {
	if info, ok := request.InfoFrom(ctx); ok && apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(info.Resource.GroupResource(), name)
	}
	return err
}
