package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Source is a store the cache follows: a list, then a watch from the
// list's revision.
type Source interface {
	rest.Lister
	rest.Watcher
}

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
	var listed sync.WaitGroup
	listed.Add(len(kinds))
	var wg sync.WaitGroup
	for _, k := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.follow(ctx, k.kind, k.newObj, k.source, sync.OnceFunc(listed.Done))
		}()
	}
	go func() {
		listed.Wait()
		c.syncedOnce.Do(func() { close(c.synced) })
	}()
	wg.Wait()
}

// follow lists and watches one kind until ctx ends; listed is called
// after each successful list.
func (c *Cache) follow(ctx context.Context, kind string, newObj func() runtime.Object, s Source, listed func()) {
	ctx = request.WithNamespace(ctx, "")
	const minBackoff, maxBackoff = 100 * time.Millisecond, 10 * time.Second
	backoff := minBackoff
	for {
		rv, err := c.list(ctx, kind, newObj, s)
		if err == nil {
			listed()
			backoff = minBackoff
			err = c.watch(ctx, newObj, s, rv)
		}
		if ctx.Err() != nil {
			return
		}
		slog.Warn("rbac policy cache: following the store again", "kind", kind, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// list replaces the objects of kind with the store's, and returns the
// revision they were read at.
func (c *Cache) list(ctx context.Context, kind string, newObj func() runtime.Object, s Source) (int64, error) {
	res, err := s.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return 0, err
	}
	objs := make([]runtime.Object, 0, len(res.Items))
	for _, item := range res.Items {
		obj := newObj()
		if err := item.Decode(obj); err != nil {
			return 0, err
		}
		objs = append(objs, obj)
	}
	c.replace(kind, objs)
	return res.ResourceVersion, nil
}

// watch applies the changes after rv until the watch fails or ctx ends.
func (c *Cache) watch(ctx context.Context, newObj func() runtime.Object, s Source, rv int64) error {
	w, err := s.Watch(ctx, &metainternalversion.ListOptions{Watch: true, ResourceVersion: strconv.FormatInt(rv, 10)})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			return ev.Err
		case watch.Added, watch.Modified, watch.Deleted:
			obj := newObj()
			if err := ev.Object.Decode(obj); err != nil {
				return err
			}
			if ev.Type == watch.Deleted {
				c.remove(obj)
			} else {
				c.put(obj)
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New("watch ended")
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
