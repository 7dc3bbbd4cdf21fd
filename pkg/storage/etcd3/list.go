package etcd3

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// maxPageSize bounds one range read when a selective list pages through
// etcd to fill its limit.
const maxPageSize = 10000

// GetList implements storage.Interface, with the resourceVersion semantics
// of kube's storage without a cache (see storage.PlanList).
func (s *Store) GetList(ctx context.Context, key string, opts storage.ListOptions) (*storage.ListResult, error) {
	plan, err := storage.PlanList(key, opts)
	if err != nil {
		return nil, err
	}
	if !opts.Recursive {
		return s.getSingle(ctx, key, plan, opts.Predicate)
	}
	pred := opts.Predicate
	paging := pred.Limit > 0
	result := &storage.ListResult{}
	var (
		rangeStart = plan.StartKey
		rangeEnd   = clientv3.GetPrefixRangeEnd(plan.KeyPrefix)
		rev        = plan.Rev
		pageSize   = pred.Limit
		lastKey    string
		hasMore    bool
		count      int64
	)
	for {
		ops := []clientv3.OpOption{clientv3.WithRange(rangeEnd)}
		if rev != 0 {
			ops = append(ops, clientv3.WithRev(rev))
		}
		if paging {
			ops = append(ops, clientv3.WithLimit(pageSize))
		}
		resp, err := s.client.Get(ctx, rangeStart, ops...)
		if err != nil {
			return nil, s.listError(err, pred.Continue != "", plan)
		}
		if rev == 0 {
			if plan.MinRev > resp.Header.Revision {
				return nil, storage.NewTooLargeResourceVersionError(plan.MinRev, resp.Header.Revision)
			}
			rev = resp.Header.Revision
		}
		count = resp.Count
		full := false
		for _, kv := range resp.Kvs {
			if paging && int64(len(result.Items)) >= pred.Limit {
				full = true
				break
			}
			// lastKey is the last key looked at, matching or not: the next
			// page starts right after it.
			lastKey = string(kv.Key)
			obj, ok, err := s.match(kv, pred)
			if err != nil {
				return nil, err
			}
			if ok {
				result.Items = append(result.Items, obj)
			}
		}
		hasMore = full || resp.More
		if !hasMore || full || !paging || int64(len(result.Items)) >= pred.Limit {
			break
		}
		// Filtering left the page short: read on, in larger steps.
		rangeStart = lastKey + "\x00"
		pageSize = min(pageSize*2, maxPageSize)
	}
	result.ResourceVersion = rev
	if hasMore {
		token, err := storage.EncodeContinue(lastKey+"\x00", plan.KeyPrefix, rev)
		if err != nil {
			return nil, storage.NewInternalError(key, err)
		}
		result.Continue = token
		if pred.Empty() {
			remaining := count - pred.Limit
			result.RemainingItemCount = &remaining
		}
	}
	return result, nil
}

// getSingle answers a non-recursive list: the one key, if it matches.
func (s *Store) getSingle(ctx context.Context, key string, plan storage.ListPlan, pred storage.SelectionPredicate) (*storage.ListResult, error) {
	var ops []clientv3.OpOption
	if plan.Rev != 0 {
		ops = append(ops, clientv3.WithRev(plan.Rev))
	}
	resp, err := s.client.Get(ctx, key, ops...)
	if err != nil {
		return nil, s.listError(err, false, plan)
	}
	if plan.MinRev > resp.Header.Revision {
		return nil, storage.NewTooLargeResourceVersionError(plan.MinRev, resp.Header.Revision)
	}
	result := &storage.ListResult{ResourceVersion: resp.Header.Revision}
	if plan.Rev != 0 {
		result.ResourceVersion = plan.Rev
	}
	for _, kv := range resp.Kvs {
		obj, ok, err := s.match(kv, pred)
		if err != nil {
			return nil, err
		}
		if ok {
			result.Items = append(result.Items, obj)
		}
	}
	return result, nil
}

// match wraps kv and reports whether it passes pred.
func (s *Store) match(kv *mvccpb.KeyValue, pred storage.SelectionPredicate) (*storage.Object, bool, error) {
	obj, err := s.object(string(kv.Key), kv.ModRevision, kv.Value)
	if err != nil {
		return nil, false, err
	}
	ok, err := s.matches(obj, pred)
	return obj, ok, err
}

// matches reports whether obj passes pred; objects are decoded only when
// the predicate needs their attributes.
func (s *Store) matches(obj *storage.Object, pred storage.SelectionPredicate) (bool, error) {
	if pred.Empty() {
		return true, nil
	}
	typed := s.cfg.NewFunc()
	if err := obj.Decode(typed); err != nil {
		return false, err
	}
	ok, err := pred.Matches(typed)
	if err != nil {
		return false, storage.NewInternalError(obj.Key, err)
	}
	return ok, nil
}

func (s *Store) listError(err error, continuing bool, plan storage.ListPlan) error {
	if errors.Is(err, rpctypes.ErrCompacted) {
		if continuing {
			return storage.NewContinueExpiredError(plan.StartKey, plan.KeyPrefix)
		}
		return storage.NewListExpiredError(plan.Rev)
	}
	if errors.Is(err, rpctypes.ErrFutureRev) {
		current, cerr := s.CurrentResourceVersion(context.Background())
		if cerr != nil {
			return cerr
		}
		return storage.NewTooLargeResourceVersionError(plan.Rev, current)
	}
	return wrapClientError(plan.KeyPrefix, err)
}
