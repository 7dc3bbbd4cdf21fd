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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
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
	Policy *rbacrules.Cache
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return rbacv1.GroupName }

// Storage is a store of one of the four kinds, guarded against privilege
// escalation: what the server's wiring reconciles the bootstrap policy
// through, and what the policy cache follows.
type Storage interface {
	rest.Storage
	rest.Getter
	rest.Lister
	rest.Watcher
	rest.Creater
	rest.Updater
	rest.GracefulDeleter
}

// GroupStorage is what the server's wiring uses of the group besides its
// routes: the stores of the four kinds.
type GroupStorage struct {
	Roles, ClusterRoles, RoleBindings, ClusterRoleBindings Storage
}

// PolicySources are the stores the policy cache follows.
func (g GroupStorage) PolicySources() rbacrules.Sources {
	return rbacrules.Sources{Roles: g.Roles, ClusterRoles: g.ClusterRoles, RoleBindings: g.RoleBindings, ClusterRoleBindings: g.ClusterRoleBindings}
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (p RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	gv := rbacv1.SchemeGroupVersion
	cache := p.Policy
	if cache == nil {
		cache = rbacrules.NewCache()
	}
	// The roles a write grants or refers to are read from the stores, as
	// kube does, so that a role just created can be bound at once; the
	// writer's own bindings come from the cache. The stores are those of
	// the roles' declarations below, known once they are built.
	roleStores := &storeRoles{}
	g := guard{authorizer: p.Authorizer, resolver: rbacrules.NewResolver(cache, roleStores)}
	var st GroupStorage
	// Each kind is served guarded (its store is the handle the wiring
	// uses too).
	guarded := func(r generic.Resource, serve func(*generic.Store) Storage) generic.Resource {
		r.Serve = func(store *generic.Store) rest.Storage { return serve(store) }
		return r
	}
	info, err := generic.BuildGroup(gv, getter,
		guarded(clusterRoleBindings, func(s *generic.Store) Storage {
			st.ClusterRoleBindings = &bindingStore{Store: s, guard: g, resource: rbacv1.Resource(clusterRoleBindings.Name),
				roleRef: func(obj runtime.Object) rbacv1.RoleRef { return obj.(*rbacv1.ClusterRoleBinding).RoleRef }}
			return st.ClusterRoleBindings
		}),
		guarded(clusterRoles, func(s *generic.Store) Storage {
			roleStores.clusterRoles = s
			st.ClusterRoles = &roleStore{Store: s, guard: g, resource: rbacv1.Resource(clusterRoles.Name),
				rules:      func(obj runtime.Object) []rbacv1.PolicyRule { return obj.(*rbacv1.ClusterRole).Rules },
				aggregated: hasAggregationRule}
			return st.ClusterRoles
		}),
		guarded(roleBindings, func(s *generic.Store) Storage {
			st.RoleBindings = &bindingStore{Store: s, guard: g, resource: rbacv1.Resource(roleBindings.Name),
				roleRef: func(obj runtime.Object) rbacv1.RoleRef { return obj.(*rbacv1.RoleBinding).RoleRef }}
			return st.RoleBindings
		}),
		guarded(roles, func(s *generic.Store) Storage {
			roleStores.roles = s
			st.Roles = &roleStore{Store: s, guard: g, resource: rbacv1.Resource(roles.Name),
				rules: func(obj runtime.Object) []rbacv1.PolicyRule { return obj.(*rbacv1.Role).Rules }}
			return st.Roles
		}),
	)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return st, info, nil
}

func hasAggregationRule(obj runtime.Object) bool {
	r := obj.(*rbacv1.ClusterRole)
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
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
		return apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, name)
	}
	return err
}
