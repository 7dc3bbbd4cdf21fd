package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

// Move describes the objects of one resource to move from one key prefix
// to another (a change of key layout).
type Move struct {
	// From and To are the old and new key prefixes, each ending in "/".
	From, To string
	// Segments is how many segments a key has after From: 1 for a
	// cluster-scoped resource, 2 for a namespaced one. Keys with other
	// counts belong to other resources (kube keeps services at
	// services/specs/<ns>/<name> under a prefix that once held
	// services/<ns>/<name>) and stay.
	Segments int
	// Transformer decrypts the values read at their old key and encrypts
	// them for their new key: the providers that authenticate the key
	// (AES-GCM) would refuse them at another key.
	Transformer value.Transformer
}

// moveBatch bounds the keys one transaction moves: two operations each
// (put, delete) within etcd's default --max-txn-ops of 128. A resource
// is moved in one transaction when etcd allows it, in batches otherwise.
const moveBatch = 64

// MoveKeys moves every object of m from its old key to its new one, with
// its value (re-encrypted for the new key) and its lease, and returns how
// many it moved. Each transaction moves a key only if it has not changed
// since it was read and its new key is free, so that MoveKeys is
// idempotent and several replicas may run it at once: a replica that
// loses a race reads again. An object whose new key is taken is left
// where it is and counted in conflicts (the object at the new key is the
// one served).
func MoveKeys(ctx context.Context, client *clientv3.Client, m Move) (moved, conflicts int, err error) {
	if !strings.HasSuffix(m.From, "/") || !strings.HasSuffix(m.To, "/") || m.Segments < 1 {
		return 0, 0, fmt.Errorf("etcd3: moving keys from %q to %q: prefixes must end in / (segments %d)", m.From, m.To, m.Segments)
	}
	if m.Transformer == nil {
		m.Transformer = value.Identity
	}
	for attempt := 0; ; attempt++ {
		kvs, taken, err := m.pending(ctx, client)
		if err != nil || len(kvs) == 0 {
			return moved, taken, err
		}
		n, done, err := m.moveAll(ctx, client, kvs)
		moved += n
		if err != nil {
			return moved, 0, err
		}
		if done {
			return moved, taken, nil
		}
		if attempt == 10 {
			return moved, 0, fmt.Errorf("etcd3: moving keys from %q to %q: they keep changing", m.From, m.To)
		}
	}
}

// pending returns the keys still to move, and how many old keys stay
// because their new key is taken. Keys are listed first without values:
// the common case, every start after the move, reads no value (kube's
// services/specs and services/endpoints share the old services prefix).
func (m Move) pending(ctx context.Context, client *clientv3.Client) ([]*mvccpb.KeyValue, int, error) {
	keys, err := client.Get(ctx, m.From, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, 0, wrapClientError(m.From, err)
	}
	var kvs []*mvccpb.KeyValue
	for _, k := range keys.Kvs {
		if !m.isOld(k) {
			continue
		}
		resp, err := client.Get(ctx, string(k.Key))
		if err != nil {
			return nil, 0, wrapClientError(string(k.Key), err)
		}
		kvs = append(kvs, resp.Kvs...) // none if it was moved meanwhile
	}
	if len(kvs) == 0 {
		return nil, 0, nil
	}
	free := kvs[:0]
	taken := 0
	for _, kv := range kvs {
		resp, err := client.Get(ctx, m.newKey(kv), clientv3.WithCountOnly())
		if err != nil {
			return nil, 0, wrapClientError(m.newKey(kv), err)
		}
		if resp.Count == 0 {
			free = append(free, kv)
		} else {
			taken++
		}
	}
	return free, taken, nil
}

// isOld tells whether kv is at one of the resource's old keys: Segments
// segments after From.
func (m Move) isOld(kv *mvccpb.KeyValue) bool {
	return strings.Count(strings.TrimPrefix(string(kv.Key), m.From), "/")+1 == m.Segments
}

func (m Move) newKey(kv *mvccpb.KeyValue) string {
	return m.To + strings.TrimPrefix(string(kv.Key), m.From)
}

// moveAll moves kvs in one transaction, or in batches when etcd refuses
// that many operations. done is false when a key changed under it.
func (m Move) moveAll(ctx context.Context, client *clientv3.Client, kvs []*mvccpb.KeyValue) (int, bool, error) {
	ok, err := m.moveTxn(ctx, client, kvs)
	if err == nil {
		if ok {
			return len(kvs), true, nil
		}
		return 0, false, nil
	}
	if !errors.Is(err, rpctypes.ErrTooManyOps) {
		return 0, false, err
	}
	moved := 0
	for start := 0; start < len(kvs); start += moveBatch {
		batch := kvs[start:min(start+moveBatch, len(kvs))]
		ok, err := m.moveTxn(ctx, client, batch)
		if err != nil {
			return moved, false, err
		}
		if !ok {
			return moved, false, nil
		}
		moved += len(batch)
	}
	return moved, true, nil
}

// moveTxn moves kvs in one transaction if none changed and every new key
// is free; ok is false when one did.
func (m Move) moveTxn(ctx context.Context, client *clientv3.Client, kvs []*mvccpb.KeyValue) (bool, error) {
	cmps := make([]clientv3.Cmp, 0, 2*len(kvs))
	ops := make([]clientv3.Op, 0, 2*len(kvs))
	for _, kv := range kvs {
		oldKey, newKey := string(kv.Key), m.newKey(kv)
		plain, _, err := m.Transformer.TransformFromStorage(ctx, kv.Value, oldKey)
		if err != nil {
			return false, fmt.Errorf("etcd3: moving %s: decrypting: %w", oldKey, err)
		}
		stored, err := m.Transformer.TransformToStorage(ctx, plain, newKey)
		if err != nil {
			return false, fmt.Errorf("etcd3: moving %s: encrypting: %w", oldKey, err)
		}
		var opts []clientv3.OpOption
		if kv.Lease != 0 {
			opts = append(opts, clientv3.WithLease(clientv3.LeaseID(kv.Lease)))
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(oldKey), "=", kv.ModRevision),
			clientv3.Compare(clientv3.CreateRevision(newKey), "=", 0))
		ops = append(ops, clientv3.OpPut(newKey, string(stored), opts...), clientv3.OpDelete(oldKey))
	}
	resp, err := client.Txn(ctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		if errors.Is(err, rpctypes.ErrTooManyOps) {
			return false, rpctypes.ErrTooManyOps
		}
		return false, wrapClientError(m.From, err)
	}
	return resp.Succeeded, nil
}
