package resourcequota

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/utils/lru"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// manager is who the plugin's status writes are recorded as, in
// managedFields: kube's plugin writes through the server's loopback
// client.
const manager = "kube-apiserver"

// accessor reads a namespace's quotas and writes their status.
type accessor struct {
	lister rest.Lister
	status *fieldmanager.Writer
	// written holds the quotas this server wrote last, by namespace/name:
	// the watch cache may not show a write yet when the next request of
	// the namespace reads it, and a newer resourceVersion wins (kube's
	// updatedQuotas, same size).
	written *lru.Cache
}

func newAccessor(lister rest.Lister, status rest.Updater) *accessor {
	gvk := corev1.SchemeGroupVersion.WithKind("ResourceQuota")
	return &accessor{lister: lister, status: fieldmanager.NewWriter(status, gvk, "status", manager), written: lru.New(100)}
}

// quotas returns copies of the namespace's quotas: from the watch cache,
// or, fresh, as etcd holds them now (after a conflict).
func (c *accessor) quotas(ctx context.Context, ns string, fresh bool) ([]corev1.ResourceQuota, error) {
	rv := "0"
	if fresh {
		rv = ""
	}
	list, err := c.lister.List(request.WithNamespace(ctx, ns), &metainternalversion.ListOptions{ResourceVersion: rv})
	if err != nil {
		return nil, fmt.Errorf("error resolving quota: %w", err)
	}
	out := make([]corev1.ResourceQuota, 0, len(list.Items))
	for _, item := range list.Items {
		var q corev1.ResourceQuota
		if err := item.Decode(&q); err != nil {
			return nil, err
		}
		out = append(out, *c.newest(&q))
	}
	return out, nil
}

// newest returns q, or the quota this server wrote last when that is
// newer (resourceVersions are etcd revisions: integers that grow).
func (c *accessor) newest(q *corev1.ResourceQuota) *corev1.ResourceQuota {
	key := q.Namespace + "/" + q.Name
	v, ok := c.written.Get(key)
	if !ok {
		return q
	}
	w := v.(*corev1.ResourceQuota)
	if revision(q) >= revision(w) {
		c.written.Remove(key)
		return q
	}
	return w.DeepCopy()
}

func revision(q *corev1.ResourceQuota) uint64 {
	rv, _ := strconv.ParseUint(q.ResourceVersion, 10, 64)
	return rv
}

// updateStatus writes q's status, if q is still at its resourceVersion.
func (c *accessor) updateStatus(ctx context.Context, q *corev1.ResourceQuota) error {
	out, err := c.status.Update(request.WithNamespace(ctx, q.Namespace), q.DeepCopy())
	if err != nil {
		return err
	}
	if updated, ok := out.(*corev1.ResourceQuota); ok {
		c.written.Add(q.Namespace+"/"+q.Name, updated.DeepCopy())
	}
	return nil
}

// namespaceLocks serialize the evaluations of each namespace.
type namespaceLocks struct {
	mu    sync.Mutex
	locks map[string]*namespaceLock
}

type namespaceLock struct {
	held chan struct{} // a token: full while someone holds the lock
	refs int
}

// lock waits for the namespace's lock, or ctx; unlock releases it.
func (l *namespaceLocks) lock(ctx context.Context, ns string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*namespaceLock{}
	}
	nl := l.locks[ns]
	if nl == nil {
		nl = &namespaceLock{held: make(chan struct{}, 1)}
		l.locks[ns] = nl
	}
	nl.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if nl.refs--; nl.refs == 0 {
			delete(l.locks, ns) // no one holds or waits: forget it
		}
		l.mu.Unlock()
	}
	select {
	case nl.held <- struct{}{}:
		return func() { <-nl.held; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
