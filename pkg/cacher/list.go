package cacher

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// GetList implements storage.Interface with the resourceVersion semantics
// of kube's cached server:
//   - "0": whatever the cache holds, once it holds what was written
//     through this server (waitForOwnWrites);
//   - unset: a consistent read: the cache first catches up with etcd's
//     current revision (falling back to etcd if it cannot within 3 s);
//   - N (NotOlderThan or legacy): the cache waits up to 3 s to reach N,
//     else TooLargeResourceVersion (504);
//   - a limit with resourceVersion unset: the page is read from a
//     snapshot of the cache, kept for its continue tokens (pages.go);
//   - Exact, continue tokens whose snapshot is gone, and limits with a
//     resourceVersion other than "" or "0": read from etcd.
//
// A limit with resourceVersion "0" is ignored (the whole list is
// returned), as kube does. Items are the cached objects themselves.
func (c *Cacher) GetList(ctx context.Context, key string, opts storage.ListOptions) (*storage.ListResult, error) {
	rev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, storage.NewInvalidError("invalid resource version: " + err.Error())
	}
	if opts.Recursive && opts.Predicate.Limit > 0 && opts.ResourceVersionMatch != metav1.ResourceVersionMatchExact {
		if ok, _ := c.ready.check(); ok {
			if res, handled, err := c.listPage(ctx, key, opts); handled {
				return res, err
			}
		}
	}
	if delegateList(opts) {
		return c.storage.GetList(ctx, key, opts)
	}
	if ok, _ := c.ready.check(); !ok {
		// A plain paged list can be served by etcd cheaply; the rest waits.
		if opts.Predicate.Empty() && opts.Predicate.Limit > 0 {
			return c.storage.GetList(ctx, key, opts)
		}
		return nil, storage.NewNotReadyError(c.resource.Resource)
	}
	if opts.ResourceVersion == "" {
		current, err := c.storage.CurrentResourceVersion(ctx)
		if err != nil {
			return nil, err
		}
		if err := c.waitUntilFresh(ctx, current); err != nil {
			if storage.IsTooLargeResourceVersion(err) {
				return c.storage.GetList(ctx, key, opts) // the cache lags: etcd answers
			}
			return nil, err
		}
	} else if err := c.waitFor(ctx, rev); err != nil {
		return nil, err
	}
	return c.listFromCache(key, opts), nil
}

// delegateList reports the lists the cache does not serve.
func delegateList(opts storage.ListOptions) bool {
	p := opts.Predicate
	return opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
		p.Continue != "" ||
		(p.Limit > 0 && opts.ResourceVersion != "0")
}

// listFromCache reads the matching objects under key from the cache.
func (c *Cacher) listFromCache(key string, opts storage.ListOptions) *storage.ListResult {
	pred := opts.Predicate
	v := c.wc.view(c.selection(key, !opts.Recursive, pred))
	res := &storage.ListResult{ResourceVersion: v.rv}
	v.each(func(e *entry) bool {
		if pred.MatchesAttrs(&e.labels, &e.fields) {
			res.Items = append(res.Items, e.obj)
		}
		return true
	})
	return res
}

// selection is what a read of key (a prefix unless single) with pred may
// select: the trigger field's index serves a predicate that pins it.
func (c *Cacher) selection(key string, single bool, pred storage.SelectionPredicate) selection {
	sel := selection{prefix: key, single: single}
	if !single && !strings.HasSuffix(key, "/") {
		sel.prefix += "/"
	}
	if value, pinned := pred.FieldValue(c.trigger); c.trigger != "" && pinned {
		sel.field, sel.value = c.trigger, value
	}
	return sel
}
