package rbacrules

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
)

// Source is a store the cache follows: a list, then a watch from the
// list's revision.
type Source = follow.Source

// Sources are the stores of the four kinds.
type Sources struct {
	Roles, ClusterRoles, RoleBindings, ClusterRoleBindings Source
}

// Run keeps the cache equal to the stores' content until ctx ends: one
// list and watch per kind, through the stores (so from their watch
// caches), re-listing after a watch fails. Synced closes once every kind
// had its first list.
func (c *Cache) Run(ctx context.Context, src Sources) {
	kinds := []struct {
		kind   string
		newObj func() runtime.Object
		source Source
	}{
		{"Role", func() runtime.Object { return &rbacv1.Role{} }, src.Roles},
		{"ClusterRole", func() runtime.Object { return &rbacv1.ClusterRole{} }, src.ClusterRoles},
		{"RoleBinding", func() runtime.Object { return &rbacv1.RoleBinding{} }, src.RoleBindings},
		{"ClusterRoleBinding", func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, src.ClusterRoleBindings},
	}
	loops := make([]*follow.Loop, len(kinds))
	for i, k := range kinds {
		loops[i] = follow.New(follow.Config{
			Name: "rbac policy cache: " + k.kind, Source: k.source,
			Handler: follow.Objects[runtime.Object]{
				New:  k.newObj,
				List: func(objs []runtime.Object, _ int64) { c.replace(k.kind, objs) },
				Event: func(t watch.EventType, obj runtime.Object) {
					if t == watch.Deleted {
						c.remove(obj)
					} else {
						c.put(obj)
					}
				},
			},
		})
	}
	follow.RunAll(ctx, func() { c.syncedOnce.Do(func() { close(c.synced) }) }, loops...)
}

// WaitForSync waits until the cache synced or ctx ends.
func (c *Cache) WaitForSync(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("rbac policy cache: not synced: %w", ctx.Err())
	}
}
