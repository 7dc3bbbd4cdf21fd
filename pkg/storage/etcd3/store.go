package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

// Store is the raw etcd3 storage of one resource.
type Store struct {
	client *clientv3.Client
	cfg    storage.Config
	leases *leaseManager
	// transformer turns stored values into plaintext and back
	// (encryption at rest); every read and write goes through it.
	transformer value.Transformer
	// codec turns objects into plaintext values (JSON, YAML, protobuf) and
	// plaintext values into the JSON handed upwards.
	codec storage.Codec
}

var _ storage.Interface = (*Store)(nil)

// New returns the store of the resource described by cfg over client,
// storing values as JSON, unencrypted. The client is shared and stays
// open: closing it is the caller's job.
func New(client *clientv3.Client, cfg storage.Config) *Store {
	return NewWithTransformer(client, cfg, value.Identity)
}

// NewWithTransformer is New with the values going through t on their way
// to and from etcd.
func NewWithTransformer(client *clientv3.Client, cfg storage.Config, t value.Transformer) *Store {
	return NewWithCodec(client, cfg, t, JSONCodec)
}

// NewWithCodec is NewWithTransformer with the values encoded by c (a
// media type) before t encrypts them. A nil t stores values unencrypted,
// a nil c as JSON.
func NewWithCodec(client *clientv3.Client, cfg storage.Config, t value.Transformer, c storage.Codec) *Store {
	if t == nil {
		t = value.Identity
	}
	if c == nil {
		c = JSONCodec
	}
	return &Store{client: client, cfg: cfg, leases: newLeaseManager(client), transformer: t, codec: c}
}

// Option configures the stores of a factory.
type Option func(*factoryOptions)

type factoryOptions struct {
	transformers func(resource schema.GroupResource) value.Transformer
	codecs       func(resource schema.GroupResource) storage.Codec
	leaseReuse   time.Duration
}

// WithLeaseReuse makes the stores share one etcd lease between the keys
// of one TTL for d (kube's --lease-reuse-duration-seconds) rather than
// DefaultLeaseReuse.
func WithLeaseReuse(d time.Duration) Option {
	return func(o *factoryOptions) { o.leaseReuse = d }
}

// WithCodecs gives each resource's store the codec of its resource (the
// media type its values are stored in); without it values are JSON.
func WithCodecs(f func(resource schema.GroupResource) storage.Codec) Option {
	return func(o *factoryOptions) { o.codecs = f }
}

// WithTransformers gives each resource's store the transformer of its
// resource (encryption at rest).
func WithTransformers(f func(resource schema.GroupResource) value.Transformer) Option {
	return func(o *factoryOptions) { o.transformers = f }
}

// NewFactory returns the storage.Factory that builds etcd3 stores over
// client, for RESTOptions.
func NewFactory(client *clientv3.Client, opts ...Option) storage.Factory {
	o := factoryOptions{
		transformers: func(schema.GroupResource) value.Transformer { return value.Identity },
		codecs:       func(schema.GroupResource) storage.Codec { return JSONCodec },
	}
	for _, opt := range opts {
		opt(&o)
	}
	return func(cfg storage.Config) (storage.Interface, storage.DestroyFunc, error) {
		gr := schema.ParseGroupResource(cfg.Resource)
		s := NewWithCodec(client, cfg, o.transformers(gr), o.codecs(gr))
		if o.leaseReuse > 0 {
			s.leases.window = o.leaseReuse
		}
		return s, func() {}, nil
	}
}

// toStorage returns what is stored at key for obj, whose JSON encoding is
// data.
func (s *Store) toStorage(ctx context.Context, key string, obj runtime.Object, data []byte) ([]byte, error) {
	encoded, err := s.codec.Encode(obj, data)
	if err != nil {
		return nil, storage.NewInternalError(key, fmt.Errorf("etcd3: encoding the value to store: %w", err))
	}
	out, err := s.transformer.TransformToStorage(ctx, encoded, key)
	if err != nil {
		return nil, storage.NewInternalError(key, fmt.Errorf("etcd3: transforming the value to store: %w", err))
	}
	return out, nil
}

// fromStorage returns the JSON encoding of the value stored at key, and
// whether it was stored by another transformer or in another media type
// than those that write now.
func (s *Store) fromStorage(ctx context.Context, key string, stored []byte) ([]byte, bool, error) {
	plain, stale, err := s.transformer.TransformFromStorage(ctx, stored, key)
	if err != nil {
		return nil, false, storage.NewInternalError(key, fmt.Errorf("etcd3: transforming the stored value: %w", err))
	}
	out, other, err := s.codec.Decode(plain, s.cfg.NewFunc)
	if err != nil {
		return nil, false, storage.NewInternalError(key, fmt.Errorf("decoding stored object: %w", err))
	}
	stale = stale || other
	if s.cfg.Normalize != nil { // e.g. a custom resource's defaults, applied on read
		if out, err = s.cfg.Normalize(out); err != nil {
			return nil, false, storage.NewInternalError(key, fmt.Errorf("decoding stored object: %w", err))
		}
	}
	return out, stale, nil
}

// object wraps the value stored at key with revision rev.
func (s *Store) object(ctx context.Context, key string, rev int64, stored []byte) (*storage.Object, error) {
	data, _, err := s.fromStorage(ctx, key, stored)
	if err != nil {
		return nil, err
	}
	return storage.NewObject(key, rev, data)
}

var _ storage.ObjectWriter = (*Store)(nil)

// Create implements storage.Interface.
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	_, _, err := s.create(ctx, key, obj, out, ttl)
	return err
}

// CreateObject implements storage.ObjectWriter.
func (s *Store) CreateObject(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) (*storage.Object, error) {
	data, rev, err := s.create(ctx, key, obj, out, ttl)
	if err != nil {
		return nil, err
	}
	return storage.NewObject(key, rev, data)
}

// create stores obj and returns its encoding (plaintext) and revision.
func (s *Store) create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) ([]byte, int64, error) {
	if rv, err := storage.ObjectResourceVersion(obj); err != nil || rv != 0 {
		return nil, 0, storage.NewInvalidError("resourceVersion should not be set on objects to be created")
	}
	data, err := storage.Encode(obj)
	if err != nil {
		return nil, 0, err
	}
	storage.ObserveWrite(ctx, key, obj, data)
	stored, err := s.toStorage(ctx, key, obj, data)
	if err != nil {
		return nil, 0, err
	}
	var opts []clientv3.OpOption
	if ttl > 0 {
		lease, err := s.leases.get(ctx, int64(ttl))
		if err != nil {
			return nil, 0, wrapClientError(key, err)
		}
		opts = append(opts, clientv3.WithLease(lease))
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(stored), opts...)).
		Commit()
	if err != nil {
		return nil, 0, wrapClientError(key, err)
	}
	if !resp.Succeeded {
		return nil, 0, storage.NewKeyExistsError(key, 0)
	}
	return data, resp.Header.Revision, storedInto(obj, resp.Header.Revision, out)
}

// Get implements storage.Interface. It always reads the latest state; a
// resourceVersion newer than etcd's revision is a TooLargeResourceVersion
// error.
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	minRev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return wrapClientError(key, err)
	}
	if minRev > resp.Header.Revision {
		return storage.NewTooLargeResourceVersionError(minRev, resp.Header.Revision)
	}
	if len(resp.Kvs) == 0 {
		if opts.IgnoreNotFound {
			return storage.Zero(out)
		}
		return storage.NewKeyNotFoundError(key, 0)
	}
	kv := resp.Kvs[0]
	data, _, err := s.fromStorage(ctx, key, kv.Value)
	if err != nil {
		return err
	}
	return decodeInto(key, data, kv.ModRevision, out)
}

var _ storage.ObjectGetter = (*Store)(nil)

// GetObject implements storage.ObjectGetter: Get without decoding.
func (s *Store) GetObject(ctx context.Context, key string, opts storage.GetOptions) (*storage.Object, error) {
	minRev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, wrapClientError(key, err)
	}
	if minRev > resp.Header.Revision {
		return nil, storage.NewTooLargeResourceVersionError(minRev, resp.Header.Revision)
	}
	if len(resp.Kvs) == 0 {
		return nil, storage.NewKeyNotFoundError(key, 0)
	}
	kv := resp.Kvs[0]
	return s.object(ctx, key, kv.ModRevision, kv.Value)
}

// state is one read of a key.
type state struct {
	obj  runtime.Object
	data []byte // the encoding (plaintext)
	rev  int64  // ModRevision; 0 when the key does not exist
	ttl  int64
	// stale: stored by another transformer (an older key), so an update
	// rewrites it even when nothing else changes.
	stale bool
}

func (s *Store) getState(ctx context.Context, key string, ignoreNotFound bool) (*state, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, wrapClientError(key, err)
	}
	return s.stateFromResponse(ctx, key, resp.Kvs, ignoreNotFound)
}

func (s *Store) stateFromResponse(ctx context.Context, key string, kvs []*mvccpb.KeyValue, ignoreNotFound bool) (*state, error) {
	st := &state{obj: s.cfg.NewFunc()}
	if len(kvs) == 0 {
		if !ignoreNotFound {
			return nil, storage.NewKeyNotFoundError(key, 0)
		}
		return st, nil
	}
	kv := kvs[0]
	var err error
	if st.data, st.stale, err = s.fromStorage(ctx, key, kv.Value); err != nil {
		return nil, err
	}
	st.rev = kv.ModRevision
	if kv.Lease != 0 {
		ttl, err := s.leases.remaining(ctx, kv.Lease)
		if err != nil {
			return nil, wrapClientError(key, err)
		}
		st.ttl = ttl
	}
	if err := decodeInto(key, st.data, st.rev, st.obj); err != nil {
		return nil, err
	}
	return st, nil
}

// stateFromObject builds the state the caller believes is current (the
// cacher's copy); if it is stale, the write's compare fails and the state
// is read again.
func (s *Store) stateFromObject(key string, obj runtime.Object) (*state, error) {
	rev, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return nil, err
	}
	copied := obj.DeepCopyObject()
	data, err := storage.Encode(copied)
	if err != nil {
		return nil, err
	}
	if err := storage.SetResourceVersion(copied, rev); err != nil {
		return nil, err
	}
	return &state{obj: copied, data: data, rev: rev}, nil
}

// current is the state a read-modify-write works on: the caller's cached
// guess first, then what etcd holds.
type current struct {
	*state
	s              *Store
	key            string
	ignoreNotFound bool
	// fresh says state was read from etcd just now: a failed check on a
	// cached guess is retried on the real state before it counts.
	fresh bool
}

func (s *Store) currentState(ctx context.Context, key string, ignoreNotFound bool, cachedExisting runtime.Object) (*current, error) {
	c := &current{s: s, key: key, ignoreNotFound: ignoreNotFound}
	var err error
	if cachedExisting != nil {
		c.state, err = s.stateFromObject(key, cachedExisting)
	} else {
		c.state, err = s.getState(ctx, key, ignoreNotFound)
		c.fresh = true
	}
	return c, err
}

// onFailure judges a failed step: on a guess it reads the real state and
// returns nil (try again) when the guess was stale; on the real state, or
// on a guess that was the real state after all, the failure stands (as in
// kube: the step is not run twice on the same state, which would call an
// admission webhook twice for one refused request).
func (c *current) onFailure(ctx context.Context, failure error) error {
	if c.fresh {
		return failure
	}
	guessed := c.rev
	if err := c.reread(ctx); err != nil {
		return err
	}
	if c.rev == guessed {
		return failure
	}
	return nil
}

func (c *current) reread(ctx context.Context) error {
	st, err := c.s.getState(ctx, c.key, c.ignoreNotFound)
	if err != nil {
		return err
	}
	c.state, c.fresh = st, true
	return nil
}

// lostRace takes the state etcd answered a failed compare with.
func (c *current) lostRace(ctx context.Context, resp *clientv3.TxnResponse) error {
	st, err := c.s.stateFromResponse(ctx, c.key, resp.Responses[0].GetResponseRange().Kvs, c.ignoreNotFound)
	if err != nil {
		return err
	}
	c.state, c.fresh = st, true
	return nil
}

// GuaranteedUpdate implements storage.Interface. An update that does not
// change the stored bytes writes nothing and keeps the resourceVersion, as
// kube does.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExisting runtime.Object) error {
	_, _, err := s.guaranteedUpdate(ctx, key, dest, ignoreNotFound, preconditions, tryUpdate, cachedExisting)
	return err
}

// GuaranteedUpdateObject implements storage.ObjectWriter.
func (s *Store) GuaranteedUpdateObject(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExisting runtime.Object) (*storage.Object, error) {
	data, rev, err := s.guaranteedUpdate(ctx, key, dest, ignoreNotFound, preconditions, tryUpdate, cachedExisting)
	if err != nil {
		return nil, err
	}
	return storage.NewObject(key, rev, data)
}

// guaranteedUpdate is GuaranteedUpdate returning the encoding (plaintext)
// and revision of the state it leaves.
func (s *Store) guaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExisting runtime.Object) ([]byte, int64, error) {
	cur, err := s.currentState(ctx, key, ignoreNotFound, cachedExisting)
	if err != nil {
		return nil, 0, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, wrapClientError(key, err)
		}
		if err := preconditions.Check(key, cur.obj); err != nil {
			if err := cur.onFailure(ctx, err); err != nil {
				return nil, 0, err
			}
			continue
		}
		out, ttl, err := tryUpdate(cur.obj.DeepCopyObject(), storage.ResponseMeta{TTL: cur.ttl, ResourceVersion: cur.rev})
		if err != nil {
			if err := cur.onFailure(ctx, err); err != nil {
				return nil, 0, err
			}
			continue
		}
		data, err := storage.Encode(out)
		if err != nil {
			return nil, 0, err
		}
		if cur.rev != 0 && !cur.stale && bytes.Equal(data, cur.data) {
			if cur.fresh { // nothing to write
				return cur.data, cur.rev, decodeInto(key, cur.data, cur.rev, dest)
			}
			if err := cur.reread(ctx); err != nil { // the guess may be stale
				return nil, 0, err
			}
			continue
		}
		storage.ObserveWrite(ctx, key, out, data)
		resp, err := s.put(ctx, key, cur.rev, out, data, ttl)
		if err != nil {
			return nil, 0, err
		}
		if !resp.Succeeded {
			// Someone else wrote in between: start again from what is there.
			if err := cur.lostRace(ctx, resp); err != nil {
				return nil, 0, err
			}
			continue
		}
		return data, resp.Header.Revision, storedInto(out, resp.Header.Revision, dest)
	}
}

// put writes obj, whose JSON is data, at key if its revision is still
// rev; when it is not, the response holds what is there.
func (s *Store) put(ctx context.Context, key string, rev int64, obj runtime.Object, data []byte, ttl *uint64) (*clientv3.TxnResponse, error) {
	stored, err := s.toStorage(ctx, key, obj, data)
	if err != nil {
		return nil, err
	}
	var opts []clientv3.OpOption
	if ttl != nil && *ttl > 0 {
		lease, err := s.leases.get(ctx, int64(*ttl))
		if err != nil {
			return nil, wrapClientError(key, err)
		}
		opts = append(opts, clientv3.WithLease(lease))
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(clientv3.OpPut(key, string(stored), opts...)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return nil, wrapClientError(key, err)
	}
	return resp, nil
}

// Delete implements storage.Interface.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExisting runtime.Object) error {
	cur, err := s.currentState(ctx, key, false, cachedExisting)
	if err != nil {
		return err
	}
	for {
		checkErr := preconditions.Check(key, cur.obj)
		if checkErr == nil && validateDeletion != nil {
			checkErr = validateDeletion(ctx, cur.obj)
		}
		if checkErr != nil {
			if err := cur.onFailure(ctx, checkErr); err != nil {
				return err
			}
			continue
		}
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", cur.rev)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).
			Commit()
		if err != nil {
			return wrapClientError(key, err)
		}
		if !resp.Succeeded {
			if err := cur.lostRace(ctx, resp); err != nil {
				return err
			}
			continue
		}
		return decodeInto(key, cur.data, resp.Header.Revision, out)
	}
}

// Count implements storage.Interface.
func (s *Store) Count(ctx context.Context, key string) (int64, error) {
	if !strings.HasSuffix(key, "/") {
		key += "/"
	}
	resp, err := s.client.Get(ctx, key, clientv3.WithRange(clientv3.GetPrefixRangeEnd(key)), clientv3.WithCountOnly())
	if err != nil {
		return 0, wrapClientError(key, err)
	}
	return resp.Count, nil
}

// CurrentResourceVersion implements storage.Interface: a linearizable read
// of one key, whose response header carries the store's revision.
func (s *Store) CurrentResourceVersion(ctx context.Context) (int64, error) {
	resp, err := s.client.Get(ctx, s.cfg.ResourcePrefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, wrapClientError(s.cfg.ResourcePrefix, err)
	}
	return resp.Header.Revision, nil
}

// ReadinessCheck implements storage.Interface: the raw store is ready as
// soon as it exists (etcd's health is checked by /readyz separately).
func (s *Store) ReadinessCheck() error { return nil }

func decodeInto(key string, data []byte, rev int64, out runtime.Object) error {
	obj, err := storage.NewObject(key, rev, data)
	if err != nil {
		return err
	}
	if err := storage.Zero(out); err != nil {
		return err
	}
	return obj.Decode(out)
}

// storedInto gives out the state just written: obj (the object encoded,
// which the caller no longer uses) with the write's revision. It saves
// decoding what was just encoded; the wire encodings of both are the same
// (times have second precision in JSON and protobuf alike).
func storedInto(obj runtime.Object, rev int64, out runtime.Object) error {
	src, dst := reflect.ValueOf(obj), reflect.ValueOf(out)
	if src.Type() != dst.Type() || src.IsNil() || dst.IsNil() {
		return storage.NewInternalError("", fmt.Errorf("etcd3: cannot store a %T into a %T", obj, out))
	}
	dst.Elem().Set(src.Elem())
	return storage.SetResourceVersion(out, rev)
}

func wrapClientError(key string, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return storage.NewUnreachableError(key, err)
	case errors.Is(err, rpctypes.ErrNoSpace):
		return storage.NewNoSpaceError(key, rpctypes.ErrNoSpace.Error())
	}
	return storage.NewUnreachableError(key, err) // etcd's words, as kube shows them
}
