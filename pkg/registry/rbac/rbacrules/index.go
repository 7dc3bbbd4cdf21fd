package rbacrules

import (
	"fmt"
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
)

// binding is a RoleBinding or ClusterRoleBinding as the index keeps it:
// what a decision needs of each subject is computed once, when the
// binding is stored, so that deciding allocates nothing.
type binding struct {
	name      string
	namespace string // "" for a ClusterRoleBinding
	roleRef   rbacv1.RoleRef
	// For each subject: the user name it matches (a User's name, or the
	// user name of a ServiceAccount: kube matches service accounts by
	// name), or the group it matches; "" when it matches no user or no
	// group that way. A service account without a namespace (in a
	// ClusterRoleBinding) matches no one.
	userNames, groupNames []string
	// sources are kube's descriptions of the binding through each of its
	// subjects (the reasons of an allowance).
	sources []*source
}

// source describes a binding through one of its subjects, in kube's
// words: ClusterRoleBinding "name" of ClusterRole "role" to Group "devs",
// or RoleBinding "name/namespace" of Role "role" to User "alice".
type source struct{ description string }

func (s *source) String() string { return s.description }

func newBinding(name, namespace string, ref rbacv1.RoleRef, subjects []rbacv1.Subject) *binding {
	b := &binding{name: name, namespace: namespace, roleRef: ref,
		userNames: make([]string, len(subjects)), groupNames: make([]string, len(subjects)), sources: make([]*source, len(subjects))}
	for i, s := range subjects {
		subject := fmt.Sprintf("%s %q", s.Kind, s.Name)
		switch s.Kind {
		case rbacv1.UserKind:
			b.userNames[i] = s.Name
		case rbacv1.GroupKind:
			b.groupNames[i] = s.Name
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = namespace
			}
			if ns != "" {
				b.userNames[i] = "system:serviceaccount:" + ns + ":" + s.Name
			}
			subject = fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
		}
		if namespace == "" {
			b.sources[i] = &source{fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", name, ref.Kind, ref.Name, subject)}
		} else {
			b.sources[i] = &source{fmt.Sprintf("RoleBinding %q of %s %q to %s", name+"/"+namespace, ref.Kind, ref.Name, subject)}
		}
	}
	return b
}

// firstSubjectFor returns the index of the first subject of b that u
// is, which kube's reasons name, or -1.
func (b *binding) firstSubjectFor(name string, groups []string) int {
	for i := range b.userNames {
		if n := b.userNames[i]; n != "" && n == name {
			return i
		}
		if g := b.groupNames[i]; g != "" && slices.Contains(groups, g) {
			return i
		}
	}
	return -1
}

// bindingIndex holds the bindings of one scope (the cluster, or one
// namespace) by name, and by the user names and groups they match.
type bindingIndex struct {
	byName  map[string]*binding
	byUser  map[string][]*binding // each sorted by name
	byGroup map[string][]*binding
}

func newBindingIndex() *bindingIndex {
	return &bindingIndex{byName: map[string]*binding{}, byUser: map[string][]*binding{}, byGroup: map[string][]*binding{}}
}

func (x *bindingIndex) put(b *binding) {
	x.remove(b.name)
	x.byName[b.name] = b
	insert := func(m map[string][]*binding, keys []string) {
		for i, k := range keys {
			if k == "" || slices.Contains(keys[:i], k) {
				continue
			}
			list := m[k]
			at := sort.Search(len(list), func(j int) bool { return list[j].name >= b.name })
			m[k] = slices.Insert(list, at, b)
		}
	}
	insert(x.byUser, b.userNames)
	insert(x.byGroup, b.groupNames)
}

func (x *bindingIndex) remove(name string) {
	old, ok := x.byName[name]
	if !ok {
		return
	}
	delete(x.byName, name)
	drop := func(m map[string][]*binding, keys []string) {
		for _, k := range keys {
			list, ok := m[k]
			if k == "" || !ok {
				continue
			}
			if list = slices.DeleteFunc(list, func(b *binding) bool { return b == old }); len(list) == 0 {
				delete(m, k)
			} else {
				m[k] = list
			}
		}
	}
	drop(x.byUser, old.userNames)
	drop(x.byGroup, old.groupNames)
}

// match is a binding that applies to a user, and the subject it does by.
type match struct {
	binding *binding
	subject int
}

// appendMatches appends the bindings of x that apply to u, once each:
// those naming its user name, then those naming each of its groups. A
// binding naming u in several ways is listed once, by its first subject
// that matches (under that subject's name or group).
func (x *bindingIndex) appendMatches(u user.Info, buf []match) []match {
	if len(x.byName) == 0 {
		return buf
	}
	name, groups := u.GetName(), u.GetGroups()
	for _, b := range x.byUser[name] {
		if i := b.firstSubjectFor(name, groups); i >= 0 && b.userNames[i] == name {
			buf = append(buf, match{b, i})
		}
	}
	for gi, g := range groups {
		if slices.Contains(groups[:gi], g) {
			continue
		}
		for _, b := range x.byGroup[g] {
			if i := b.firstSubjectFor(name, groups); i >= 0 && b.userNames[i] == "" && b.groupNames[i] == g {
				buf = append(buf, match{b, i})
			}
		}
	}
	return buf
}

// matches appends to buf the cluster bindings, then the bindings of
// namespace ns (none when ns is ""), that apply to u.
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
