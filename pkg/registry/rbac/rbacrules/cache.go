// Package rbacrules is what RBAC decides with: the roles and bindings the
// server stores, held in memory and indexed by subject (Cache, kept
// current from the stores' watches), the resolution of a user's rules from
// them (Resolver), kube's matching of a rule against a request
// (RuleAllows), and the escalation check of role and binding writes
// (ConfirmNoEscalation).
//
// It sits in the registry layer, beside the rbac resources that feed it:
// the authorizer above (pkg/apiserver/authz) and the rbac storage's
// escalation checks both read it; it reads the stores through registry
// verbs only.
package rbacrules

import (
	"context"
	"sort"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// Cache holds every Role, ClusterRole, RoleBinding and ClusterRoleBinding
// in memory. Bindings are indexed by the subjects they name, so that the
// bindings of a user are a few map lookups (its name and groups), not a
// scan. Objects in the cache are never modified: an update replaces them,
// so a reader may keep what it read after releasing the lock.
type Cache struct {
	mu           sync.RWMutex
	roles        map[string]map[string]*rbacv1.Role // namespace -> name
	clusterRoles map[string]*rbacv1.ClusterRole
	// clusterBindings are the ClusterRoleBindings; bindings the
	// RoleBindings of each namespace.
	clusterBindings *bindingIndex
	bindings        map[string]*bindingIndex

	// synced is closed once every resource had its first list.
	synced     chan struct{}
	syncedOnce sync.Once
	// clusterRolesChanged is signalled (never blocking) when a ClusterRole
	// changes, for the aggregation of cluster roles.
	clusterRolesChanged chan struct{}
}

// NewCache returns an empty cache; Run fills it.
func NewCache() *Cache {
	return &Cache{
		roles:               map[string]map[string]*rbacv1.Role{},
		clusterRoles:        map[string]*rbacv1.ClusterRole{},
		clusterBindings:     newBindingIndex(),
		bindings:            map[string]*bindingIndex{},
		synced:              make(chan struct{}),
		clusterRolesChanged: make(chan struct{}, 1),
	}
}

// Synced is closed once the cache holds what the stores held when it
// started: until then it may miss objects.
func (c *Cache) Synced() <-chan struct{} { return c.synced }

// ClusterRolesChanged receives a value after a ClusterRole was added,
// changed or removed (several changes may give one value).
func (c *Cache) ClusterRolesChanged() <-chan struct{} { return c.clusterRolesChanged }

// GetRole returns a Role, or kube's lister NotFound error. It implements
// RoleGetter.
func (c *Cache) GetRole(_ context.Context, namespace, name string) (*rbacv1.Role, error) {
	c.mu.RLock()
	r := c.roles[namespace][name]
	c.mu.RUnlock()
	if r == nil {
		return nil, apierrors.NewNotFound(rbacv1.Resource("role"), name)
	}
	return r, nil
}

// GetClusterRole returns a ClusterRole, or kube's lister NotFound error.
// It implements RoleGetter.
func (c *Cache) GetClusterRole(_ context.Context, name string) (*rbacv1.ClusterRole, error) {
	c.mu.RLock()
	r := c.clusterRoles[name]
	c.mu.RUnlock()
	if r == nil {
		return nil, apierrors.NewNotFound(rbacv1.Resource("clusterrole"), name)
	}
	return r, nil
}

// ClusterRoles returns every ClusterRole, sorted by name. The objects
// must not be modified.
func (c *Cache) ClusterRoles() []*rbacv1.ClusterRole {
	c.mu.RLock()
	out := make([]*rbacv1.ClusterRole, 0, len(c.clusterRoles))
	for _, r := range c.clusterRoles {
		out = append(out, r)
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NewStaticCache returns a cache holding objs (Roles, ClusterRoles,
// RoleBindings, ClusterRoleBindings), synced and following no store: for
// tests and benchmarks of what decides with a cache.
func NewStaticCache(objs ...runtime.Object) *Cache {
	c := NewCache()
	for _, o := range objs {
		c.put(o)
	}
	c.syncedOnce.Do(func() { close(c.synced) })
	return c
}
