package etcd3_test

import (
	"context"
	"crypto/aes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

func keysUnder(t *testing.T, c *clientv3.Client, prefix string) []string {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, strings.TrimPrefix(string(kv.Key), prefix))
	}
	sort.Strings(keys)
	return keys
}

func put(t *testing.T, c *clientv3.Client, kvs ...string) {
	t.Helper()
	for i := 0; i < len(kvs); i += 2 {
		if _, err := c.Put(context.Background(), kvs[i], kvs[i+1]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMoveKeysServicesLayout: old services/<ns>/<name> keys move under
// services/specs/; kube's keys under the same prefix (specs, endpoints)
// are not this resource's old keys and stay; a second run moves nothing;
// an old key whose new key is taken stays.
func TestMoveKeysServicesLayout(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	ctx := context.Background()
	put(t, etcd.Client,
		"/r/services/ns/a", `{"a":1}`,
		"/r/services/specs/b", `{"svc b in ns specs":1}`,
		"/r/services/specs/ns/c", `{"c":1}`,
		"/r/services/endpoints/ns/c", `{"ep c":1}`,
		"/r/services/ns/c", `{"old c":1}`,
		"/r/servicesx/ns/d", `{"other resource":1}`)
	m := etcd3.Move{From: "/r/services/", To: "/r/services/specs/", Segments: 2}
	moved, conflicts, err := etcd3.MoveKeys(ctx, etcd.Client, m)
	if err != nil || moved != 2 || conflicts != 1 {
		t.Fatalf("MoveKeys = %d moved, %d conflicts, %v; want 2, 1, nil", moved, conflicts, err)
	}
	want := []string{"endpoints/ns/c", "ns/c", "specs/ns/c", "specs/ns/a", "specs/specs/b"}
	sort.Strings(want)
	if got := keysUnder(t, etcd.Client, "/r/services/"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("keys after the move: %v, want %v", got, want)
	}
	if moved, _, err := etcd3.MoveKeys(ctx, etcd.Client, m); err != nil || moved != 0 {
		t.Errorf("a second run moved %d (%v), want nothing", moved, err)
	}
	if got := keysUnder(t, etcd.Client, "/r/servicesx/"); len(got) != 1 {
		t.Errorf("another resource's keys: %v", got)
	}
}

// TestMoveKeysConcurrentBatches: more keys than one etcd transaction
// takes (embedded etcd: 128 operations) are moved in batches; replicas
// moving at once move each key exactly once, and values encrypted with
// their key as authenticated data (AES-GCM) are re-encrypted for the new
// key.
func TestMoveKeysConcurrentBatches(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	block, err := aes.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := value.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	tr := value.NewPrefixTransformers(fmt.Errorf("no provider"), value.PrefixTransformer{Prefix: []byte("k8s:enc:aesgcm:v1:k:"), Transformer: gcm})
	const n = 150
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("/r/nodes/n%03d", i)
		v, err := tr.TransformToStorage(ctx, []byte(fmt.Sprintf(`{"i":%d}`, i)), key)
		if err != nil {
			t.Fatal(err)
		}
		put(t, etcd.Client, key, string(v))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			moved, _, err := etcd3.MoveKeys(ctx, etcd.Client, etcd3.Move{From: "/r/nodes/", To: "/r/minions/", Segments: 1, Transformer: tr})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += moved
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != n {
		t.Errorf("replicas moved %d keys together, want %d", total, n)
	}
	if left := keysUnder(t, etcd.Client, "/r/nodes/"); len(left) != 0 {
		t.Errorf("left at the old keys: %v", left)
	}
	resp, err := etcd.Client.Get(ctx, "/r/minions/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != n {
		t.Fatalf("%d keys under the new prefix (%v), want %d", len(resp.Kvs), err, n)
	}
	for _, kv := range resp.Kvs {
		plain, _, err := tr.TransformFromStorage(ctx, kv.Value, string(kv.Key))
		if err != nil || !strings.HasPrefix(string(plain), `{"i":`) {
			t.Fatalf("%s: %q, %v", kv.Key, plain, err)
		}
	}
}
