package main

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The raw-etcd scenario does the work of create, get and list directly on
// etcd, storing what an apiserver would (the object's JSON under
// <prefix>/configmaps/<namespace>/<name>), so that the apiserver's
// overhead over etcd shows. It is the one place the tool uses a client
// library: etcd's.

// rawPrefix is where raw-etcd keeps its objects, away from any apiserver's.
const rawPrefix = "/bench-raw/configmaps/"

func rawKeyPrefix(ns string) string { return rawPrefix + ns + "/" }

// newEtcdClient connects to --etcd-url (http only, loopback unless
// --allow-remote).
func newEtcdClient(b *Bench) (*clientv3.Client, error) {
	if b.EtcdURL == "" {
		return nil, errors.New("--etcd-url: required")
	}
	u, err := url.Parse(b.EtcdURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("--etcd-url: %q is not an http://host:port URL", b.EtcdURL)
	}
	if err := checkLoopback(u.Hostname(), b.AllowRemote); err != nil {
		return nil, fmt.Errorf("--etcd-url: %w", err)
	}
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{b.EtcdURL},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
}

// storedConfigMapJSON is the i-th ConfigMap as an apiserver stores it: the
// created object plus uid and creationTimestamp (no managedFields).
func storedConfigMapJSON(ns string, i, size int) []byte {
	var uid [16]byte
	_, _ = cryptorand.Read(uid[:])
	uid[6] = uid[6]&0x0f | 0x40
	uid[8] = uid[8]&0x3f | 0x80
	id := fmt.Sprintf("%x-%x-%x-%x-%x", uid[0:4], uid[4:6], uid[6:8], uid[8:10], uid[10:])
	return []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"` + benchName(i) + `","namespace":"` + ns +
		`","uid":"` + id + `","creationTimestamp":"` + time.Now().UTC().Format(time.RFC3339) +
		`","labels":{"bucket":"` + bucketOf(i) + `"}},"data":{"data":"` + payload(i, size) + `"}}`)
}

// runRawEtcd runs raw-etcd-create, raw-etcd-get and raw-etcd-list.
func runRawEtcd(ctx context.Context, b *Bench) ([]Result, error) {
	cli, err := newEtcdClient(b)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	prefix := rawKeyPrefix(b.Namespace)
	result := func(name string, start time.Time, params Fields) Result {
		r := b.result(name, params)
		r.Server, r.Time = b.EtcdURL, start
		r.Params["key_prefix"] = prefix
		return r
	}

	// create: skip existing keys, then one create-if-absent transaction
	// each, as an apiserver's etcd3 store does.
	start := time.Now()
	existing, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, kv := range existing.Kvs {
		have[string(kv.Key)] = true
	}
	var todo []int
	for i := range b.Count {
		if !have[prefix+benchName(i)] {
			todo = append(todo, i)
		}
	}
	run := runWorkers(ctx, b.Concurrency, len(todo), func(ctx context.Context, n int) error {
		key := prefix + benchName(todo[n])
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, string(storedConfigMapJSON(b.Namespace, todo[n], b.Size)))).
			Commit()
		if err == nil && !resp.Succeeded {
			err = fmt.Errorf("%s: already exists", key)
		}
		return err
	})
	create := result("raw-etcd-create", start, Fields{"count": b.Count, "size_bytes": b.Size, "concurrency": b.Concurrency})
	create.Fields.add(run.fields())
	create.Fields["skipped_existing"] = b.Count - len(todo)
	create.Fields["created"] = run.ok
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	// get: linearizable single-key reads, as an apiserver's GET without
	// resourceVersion.
	start = time.Now()
	run = runWorkersUntil(ctx, b.Concurrency, timedOps(b.Duration, b.MaxRequests), func(ctx context.Context, _ int) error {
		key := prefix + benchName(mrand.IntN(b.Count))
		resp, err := cli.Get(ctx, key)
		if err == nil && len(resp.Kvs) != 1 {
			err = fmt.Errorf("%s: not found", key)
		}
		return err
	})
	get := result("raw-etcd-get", start, Fields{"count": b.Count, "concurrency": b.Concurrency, "duration_ms": ms(b.Duration), "max_requests": b.MaxRequests})
	get.Fields.add(run.fields())
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	start = time.Now()
	list, err := rawList(ctx, cli, b, prefix)
	if err != nil {
		return nil, err
	}
	lr := result("raw-etcd-list", start, Fields{"count": b.Count, "repeats": b.Repeats, "page_size": b.PageSize})
	lr.Fields.add(list)
	return []Result{create, get, lr}, nil
}

// rawListVariant mirrors a listVariant on etcd.
type rawListVariant struct {
	name string
	// serializable reads the local member without a quorum (like rv=0).
	serializable bool
	limit        int
	bucket       int
}

func rawListVariants(pageSize int) []rawListVariant {
	return []rawListVariant{
		{name: "rv0", serializable: true, bucket: -1},
		{name: "rv_unset", bucket: -1},
		{name: "paginated", limit: pageSize, bucket: -1},
		// etcd cannot select by label: read everything and filter, as an
		// apiserver without a watch cache does.
		{name: "selector_bucket_7", bucket: selectedBucket},
	}
}

// rawList times each list variant --repeats times and checks its items.
func rawList(ctx context.Context, cli *clientv3.Client, b *Bench, prefix string) (Fields, error) {
	out := Fields{}
	for _, v := range rawListVariants(b.PageSize) {
		var lat []time.Duration
		var errs errorSamples
		var items []listItem
		var bytes int64
		pages, mismatches := 0, 0
		for range b.Repeats {
			t0 := time.Now()
			values, p, err := rawGetAll(ctx, cli, prefix, v)
			if err == nil && v.bucket >= 0 {
				values, err = filterBucket(values, v.bucket)
			}
			d := time.Since(t0)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				errs.add(err)
				continue
			}
			lat = append(lat, d)
			bytes, pages = 0, p
			for _, val := range values {
				bytes += int64(len(val))
			}
			if items, err = decodeItems(values); err != nil {
				return nil, err
			}
			if checkItems(items, b.Count, v.bucket) != nil {
				mismatches++
			}
		}
		f := Summarize(lat).Fields("")
		f.add(errs.fields())
		f["bytes"] = bytes
		f["items"] = len(items)
		f["items_expected"] = expectedItems(b.Count, v.bucket)
		f["pages"] = pages
		f["count_mismatches"] = mismatches
		if err := checkItems(items, b.Count, v.bucket); err != nil {
			f["count_error"] = err.Error()
		}
		out[v.name] = f
	}
	return out, nil
}

// rawGetAll reads every value under prefix, in pages of v.limit at one
// revision when v.limit > 0, and returns them with the number of pages.
func rawGetAll(ctx context.Context, cli *clientv3.Client, prefix string, v rawListVariant) ([][]byte, int, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	opts := []clientv3.OpOption{clientv3.WithRange(end)}
	if v.serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	if v.limit > 0 {
		opts = append(opts, clientv3.WithLimit(int64(v.limit)))
	}
	var values [][]byte
	key := prefix
	for pages := 1; ; pages++ {
		resp, err := cli.Get(ctx, key, opts...)
		if err != nil {
			return nil, pages, err
		}
		for _, kv := range resp.Kvs {
			values = append(values, kv.Value)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return values, pages, nil
		}
		if pages >= maxPages {
			return nil, pages, fmt.Errorf("list: still more after %d pages", pages)
		}
		// Next page: after the last key, at the first page's revision.
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		if pages == 1 {
			opts = append(opts, clientv3.WithRev(resp.Header.Revision))
		}
	}
}

// filterBucket keeps the values whose bucket label is bucket.
func filterBucket(values [][]byte, bucket int) ([][]byte, error) {
	want := strconv.Itoa(bucket)
	var kept [][]byte
	for _, v := range values {
		var it listItem
		if err := json.Unmarshal(v, &it); err != nil {
			return nil, err
		}
		if it.Metadata.Labels["bucket"] == want {
			kept = append(kept, v)
		}
	}
	return kept, nil
}

func decodeItems(values [][]byte) ([]listItem, error) {
	items := make([]listItem, len(values))
	for i, v := range values {
		if err := json.Unmarshal(v, &items[i]); err != nil {
			return nil, fmt.Errorf("decoding a stored object: %w", err)
		}
	}
	return items, nil
}

// deleteRaw removes everything raw-etcd stored for the namespace.
func deleteRaw(ctx context.Context, b *Bench) (int64, error) {
	cli, err := newEtcdClient(b)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	resp, err := cli.Delete(ctx, rawKeyPrefix(b.Namespace), clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	return resp.Deleted, nil
}
