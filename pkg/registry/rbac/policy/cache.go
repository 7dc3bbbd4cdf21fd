// Package policy is what RBAC decides with: the roles and bindings the
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
package policy

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
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

// binding is a RoleBinding or ClusterRoleBinding as the index keeps it.
type binding struct {
	name      string
	namespace string // "" for a ClusterRoleBinding
	roleRef   rbacv1.RoleRef
	subjects  []rbacv1.Subject
}

// bindingIndex holds the bindings of one scope (the cluster, or one
// namespace) by name and by subject key (see subjectKey).
type bindingIndex struct {
	byName    map[string]*binding
	bySubject map[string][]*binding // each sorted by name
}

func newBindingIndex() *bindingIndex {
	return &bindingIndex{byName: map[string]*binding{}, bySubject: map[string][]*binding{}}
}

// Subject keys: a user name ("u:alice"), a group ("g:devs"). A service
// account subject is the user name it authenticates as: kube matches it
// by name ("u:system:serviceaccount:ns:name").
const (
	userKeyPrefix  = "u:"
	groupKeyPrefix = "g:"
)

// subjectKey returns the index key of a subject of a binding in namespace
// ns ("" for cluster bindings), and false for a subject that can match no
// user (an unknown kind; a service account without a namespace).
func subjectKey(s *rbacv1.Subject, ns string) (string, bool) {
	switch s.Kind {
	case rbacv1.UserKind:
		return userKeyPrefix + s.Name, true
	case rbacv1.GroupKind:
		return groupKeyPrefix + s.Name, true
	case rbacv1.ServiceAccountKind:
		saNamespace := s.Namespace
		if saNamespace == "" {
			saNamespace = ns
		}
		if saNamespace == "" {
			return "", false
		}
		return userKeyPrefix + serviceAccountUsername(saNamespace, s.Name), true
	}
	return "", false
}

func serviceAccountUsername(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

func (x *bindingIndex) put(b *binding) {
	x.remove(b.name)
	x.byName[b.name] = b
	for _, key := range b.keys() {
		list := x.bySubject[key]
		i := sort.Search(len(list), func(i int) bool { return list[i].name >= b.name })
		x.bySubject[key] = slices.Insert(list, i, b)
	}
}

func (x *bindingIndex) remove(name string) {
	old, ok := x.byName[name]
	if !ok {
		return
	}
	delete(x.byName, name)
	for _, key := range old.keys() {
		list := slices.DeleteFunc(x.bySubject[key], func(b *binding) bool { return b == old })
		if len(list) == 0 {
			delete(x.bySubject, key)
		} else {
			x.bySubject[key] = list
		}
	}
}

// keys returns the distinct subject keys of b.
func (b *binding) keys() []string {
	var keys []string
	for i := range b.subjects {
		if k, ok := subjectKey(&b.subjects[i], b.namespace); ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// firstSubjectFor returns the index of the first subject of b that u
// is, as kube's resolver names it in its reasons, or -1.
func (b *binding) firstSubjectFor(u user.Info) int {
	name, groups := u.GetName(), u.GetGroups()
	for i := range b.subjects {
		s := &b.subjects[i]
		switch s.Kind {
		case rbacv1.UserKind:
			if s.Name == name {
				return i
			}
		case rbacv1.GroupKind:
			if slices.Contains(groups, s.Name) {
				return i
			}
		case rbacv1.ServiceAccountKind:
			if k, ok := subjectKey(s, b.namespace); ok && strings.TrimPrefix(k, userKeyPrefix) == name {
				return i
			}
		}
	}
	return -1
}

// match is a binding that applies to a user, and the subject it does by.
type match struct {
	binding *binding
	subject int
}

// matches appends to buf the cluster bindings, then the bindings of
// namespace ns (none when ns is ""), that apply to u: those naming its
// user name or one of its groups. Each binding appears once, found by its
// first subject that u is.
func (c *Cache) matches(u user.Info, ns string, buf []match) []match {
	c.mu.RLock()
	defer c.mu.RUnlock()
	buf = c.clusterBindings.appendMatches(u, buf)
	if ns != "" {
		if x := c.bindings[ns]; x != nil {
			buf = x.appendMatches(u, buf)
		}
	}
	return buf
}

func (x *bindingIndex) appendMatches(u user.Info, buf []match) []match {
	if len(x.byName) == 0 {
		return buf
	}
	visit := func(key string) {
		for _, b := range x.bySubject[key] {
			i := b.firstSubjectFor(u)
			if i < 0 {
				continue
			}
			// A binding naming u twice is listed under the key of its
			// first subject that matches.
			if k, _ := subjectKey(&b.subjects[i], b.namespace); k == key {
				buf = append(buf, match{binding: b, subject: i})
			}
		}
	}
	visit(userKeyPrefix + u.GetName())
	for _, g := range u.GetGroups() {
		visit(groupKeyPrefix + g)
	}
	return buf
}

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
