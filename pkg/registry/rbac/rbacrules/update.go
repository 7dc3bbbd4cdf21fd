package rbacrules

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// put adds or replaces obj (a *Role, *ClusterRole, *RoleBinding or
// *ClusterRoleBinding, which the cache keeps and never modifies).
func (c *Cache) put(obj runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(obj)
}

func (c *Cache) putLocked(obj runtime.Object) {
	switch o := obj.(type) {
	case *rbacv1.Role:
		m := c.roles[o.Namespace]
		if m == nil {
			m = map[string]*rbacv1.Role{}
			c.roles[o.Namespace] = m
		}
		m[o.Name] = o
	case *rbacv1.ClusterRole:
		c.clusterRoles[o.Name] = o
		c.signalClusterRoles()
	case *rbacv1.RoleBinding:
		x := c.bindings[o.Namespace]
		if x == nil {
			x = newBindingIndex()
			c.bindings[o.Namespace] = x
		}
		x.put(newBinding(o.Name, o.Namespace, o.RoleRef, o.Subjects))
	case *rbacv1.ClusterRoleBinding:
		c.clusterBindings.put(newBinding(o.Name, "", o.RoleRef, o.Subjects))
	}
}

// remove deletes the object of obj's kind, namespace and name.
func (c *Cache) remove(obj runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(obj)
}

func (c *Cache) removeLocked(obj runtime.Object) {
	switch o := obj.(type) {
	case *rbacv1.Role:
		if m := c.roles[o.Namespace]; m != nil {
			delete(m, o.Name)
			if len(m) == 0 {
				delete(c.roles, o.Namespace)
			}
		}
	case *rbacv1.ClusterRole:
		delete(c.clusterRoles, o.Name)
		c.signalClusterRoles()
	case *rbacv1.RoleBinding:
		if x := c.bindings[o.Namespace]; x != nil {
			x.remove(o.Name)
			if len(x.byName) == 0 {
				delete(c.bindings, o.Namespace)
			}
		}
	case *rbacv1.ClusterRoleBinding:
		c.clusterBindings.remove(o.Name)
	}
}

// replace makes the objects of kind exactly objs (a fresh list).
func (c *Cache) replace(kind string, objs []runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch kind {
	case "Role":
		c.roles = map[string]map[string]*rbacv1.Role{}
	case "ClusterRole":
		c.clusterRoles = map[string]*rbacv1.ClusterRole{}
		c.signalClusterRoles()
	case "RoleBinding":
		c.bindings = map[string]*bindingIndex{}
	case "ClusterRoleBinding":
		c.clusterBindings = newBindingIndex()
	}
	for _, o := range objs {
		c.putLocked(o)
	}
}

func (c *Cache) signalClusterRoles() {
	select {
	case c.clusterRolesChanged <- struct{}{}:
	default:
	}
}
