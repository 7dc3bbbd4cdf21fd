package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// watchName is the name of the k-th ConfigMap the watch scenario updates.
func watchName(k int) string { return "bench-watch-" + strconv.Itoa(k) }

// watchIndex returns k for a name bench-watch-<k>, or -1.
func watchIndex(name string) int {
	const p = "bench-watch-"
	if len(name) <= len(p) || name[:len(p)] != p {
		return -1
	}
	k, err := strconv.Atoi(name[len(p):])
	if err != nil || k < 0 {
		return -1
	}
	return k
}

// watchObjectJSON is the k-th watched ConfigMap carrying update seq, sent
// at sent, with size bytes of payload. rv is the resourceVersion the
// update is conditional on ("" for a create): each object has one writer,
// who knows it from its previous write.
func watchObjectJSON(ns string, k int, rv string, seq int, sent time.Time, size int) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + watchName(k) + `","namespace":"` + ns +
		`","resourceVersion":"` + rv + `"},"data":{"seq":"` + strconv.Itoa(seq) + `","sent_unix_nano":"` + strconv.FormatInt(sent.UnixNano(), 10) +
		`","payload":"` + payload(seq, size) + `"}}`)
}

// watchEvent is one received change of a watched ConfigMap.
type watchEvent struct {
	obj, seq int
	rv       uint64
	rvOK     bool
	recv     time.Time
	// sent is when the update was sent (0 if the object did not say).
	sent int64
}

// watcher is one open watch and what it received.
type watcher struct {
	established time.Duration
	events      []watchEvent
	bookmarks   int
	err         error
	// received counts events of watched objects; finished is set when the
	// stream ended. Both are read by the scenario while the watch runs.
	received atomic.Int64
	finished atomic.Bool
}

// run opens the watch, signals ready once the server answered, and reads
// events until ctx ends or the stream does.
func (w *watcher) run(ctx context.Context, c *Client, path string, q url.Values, ready func()) {
	defer w.finished.Store(true)
	t0 := time.Now()
	resp, err := c.Stream(ctx, path, q)
	w.established = time.Since(t0)
	ready()
	if err != nil {
		w.err = err
		return
	}
	defer resp.Body.Close()
	// The stream is one JSON object per line; a json.Decoder reads them
	// one at a time as they arrive, in one pass: the tool shares the
	// machine with the server, so it decodes only what it checks (the
	// payload is skipped, not copied).
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata objectMeta `json:"metadata"`
				Data     struct {
					Seq  string `json:"seq"`
					Sent string `json:"sent_unix_nano"`
				} `json:"data"`
				Message string `json:"message"` // an ERROR event's Status
			} `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() == nil {
				w.err = fmt.Errorf("watch stream ended: %w", err)
			}
			return
		}
		recv := time.Now()
		switch ev.Type {
		case "BOOKMARK":
			w.bookmarks++
			continue
		case "ERROR":
			w.err = fmt.Errorf("watch ERROR event: %s", ev.Object.Message)
			return
		}
		obj := &ev.Object
		k := watchIndex(obj.Metadata.Name)
		if k < 0 {
			continue // another ConfigMap of the namespace
		}
		e := watchEvent{obj: k, recv: recv}
		e.seq, _ = strconv.Atoi(obj.Data.Seq)
		e.sent, _ = strconv.ParseInt(obj.Data.Sent, 10, 64)
		rv, err := strconv.ParseUint(obj.Metadata.ResourceVersion, 10, 64)
		e.rv, e.rvOK = rv, err == nil
		w.events = append(w.events, e)
		w.received.Add(1)
	}
}

// runWatch opens --watchers watches on the namespace's ConfigMaps from the
// current resourceVersion, sends --updates updates spread over
// --watch-objects ConfigMaps, and measures how long until every watcher
// had every update, and whether any missed, duplicated or reordered one.
func runWatch(ctx context.Context, b *Bench) (Result, error) {
	c, err := b.Client()
	if err != nil {
		return Result{}, err
	}
	if err := c.ensureNamespace(ctx, b.Namespace); err != nil {
		return Result{}, err
	}
	objects := min(b.WatchObjects, b.Updates)
	path := configMapsPath(b.Namespace)
	for k := range objects {
		_, err := c.Do(ctx, http.MethodPost, path, nil, watchObjectJSON(b.Namespace, k, "", 0, time.Now(), b.Size), "application/json", false)
		if err != nil && !isStatus(err, http.StatusConflict) {
			return Result{}, fmt.Errorf("creating %s: %w", watchName(k), err)
		}
	}
	rv, err := c.currentRV(ctx, b.Namespace)
	if err != nil {
		return Result{}, err
	}

	wctx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	watchers := make([]*watcher, b.Watchers)
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	ready.Add(b.Watchers)
	timeout := strconv.Itoa(int(b.Deadline.Seconds()) + 1)
	q := url.Values{"watch": {"true"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"}, "timeoutSeconds": {timeout}}
	for i := range watchers {
		w := &watcher{}
		watchers[i] = w
		wg.Go(func() { w.run(wctx, c, path, q, ready.Done) })
	}
	ready.Wait() // every watch answered (or failed): updates start now
	for _, w := range watchers {
		if w.err != nil {
			stopWatches()
			wg.Wait()
			return Result{}, fmt.Errorf("opening a watch: %w", w.err)
		}
	}

	// The processes' CPU over the updates and their delivery: whether
	// the run was bound by CPU or by the writes' latency.
	serverCPU0, etcdCPU0 := procCPU(b.PID), procCPU(b.EtcdPID)
	writes := sendWatchUpdates(ctx, c, b, objects)
	acked := 0
	for _, a := range writes.acked {
		acked += len(a)
	}
	waitDelivered(ctx, watchers, int64(acked))
	serverCPU, etcdCPU := procCPU(b.PID)-serverCPU0, procCPU(b.EtcdPID)-etcdCPU0
	deliveredIn := time.Since(writes.start)
	stopWatches()
	wg.Wait()

	r := b.result("watch", Fields{"watchers": b.Watchers, "updates": b.Updates, "watch_objects": objects, "size_bytes": b.Size})
	r.Fields["updates_acked"] = acked
	r.Fields["update_ops_per_sec"] = perSec(acked, writes.elapsed)
	r.Fields.add(Summarize(writes.lat).Fields("update_"))
	for k, v := range writes.errs.fields() {
		r.Fields["update_"+k] = v
	}
	r.Fields.add(analyzeWatchers(watchers, writes))
	if b.PID > 0 {
		r.Fields["server_cpu_s"] = serverCPU
		r.Fields["server_cores_used"] = serverCPU / deliveredIn.Seconds()
	}
	if b.EtcdPID > 0 {
		r.Fields["etcd_cpu_s"] = etcdCPU
	}
	return r, ctx.Err()
}

// currentRV is the resourceVersion of a LIST of the namespace's ConfigMaps
// read from etcd (no resourceVersion): watches from it miss nothing after.
func (c *Client) currentRV(ctx context.Context, ns string) (string, error) {
	resp, err := c.Do(ctx, http.MethodGet, configMapsPath(ns), url.Values{"limit": {"1"}}, nil, "", true)
	if err != nil {
		return "", err
	}
	var l listBody
	if err := json.Unmarshal(resp.Body, &l); err != nil {
		return "", fmt.Errorf("decoding list: %w", err)
	}
	if l.Metadata.ResourceVersion == "" {
		return "", errors.New("list without a resourceVersion")
	}
	return l.Metadata.ResourceVersion, nil
}

// objectRV GETs the object at path and returns its resourceVersion.
func (c *Client) objectRV(ctx context.Context, path string) (string, error) {
	resp, err := c.Do(ctx, http.MethodGet, path, nil, nil, "", true)
	if err != nil {
		return "", err
	}
	return decodeRV(resp.Body)
}

func decodeRV(body []byte) (string, error) {
	var obj struct {
		Metadata objectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return "", fmt.Errorf("decoding object: %w", err)
	}
	if obj.Metadata.ResourceVersion == "" {
		return "", errors.New("object without a resourceVersion")
	}
	return obj.Metadata.ResourceVersion, nil
}

// watchWrites is what the writers did.
type watchWrites struct {
	start   time.Time
	elapsed time.Duration
	// acked[k] are the sequence numbers of object k the server acknowledged.
	acked [][]int
	lat   []time.Duration
	errs  errorSamples
}

// sendWatchUpdates runs one writer per object, each sending its share of
// --updates PUTs in sequence (1, 2, ...), each conditional on the
// resourceVersion the previous one returned. (kube-apiserver accepts
// unconditional PUTs of ConfigMaps too, but not every server does, and
// this is what a controller does.)
func sendWatchUpdates(ctx context.Context, c *Client, b *Bench, objects int) *watchWrites {
	ws := &watchWrites{acked: make([][]int, objects)}
	lats := make([][]time.Duration, objects)
	errs := make([]errorSamples, objects)
	var wg sync.WaitGroup
	ws.start = time.Now()
	for k := range objects {
		n := b.Updates / objects
		if k < b.Updates%objects {
			n++
		}
		wg.Go(func() {
			path := configMapsPath(b.Namespace) + "/" + watchName(k)
			rv, err := c.objectRV(ctx, path)
			if err != nil {
				errs[k].add(err)
				return
			}
			for seq := 1; seq <= n && ctx.Err() == nil; seq++ {
				sent := time.Now()
				resp, err := c.Do(ctx, http.MethodPut, path, nil, watchObjectJSON(b.Namespace, k, rv, seq, sent, b.Size), "application/json", true)
				took := time.Since(sent)
				if err == nil {
					rv, err = decodeRV(resp.Body)
				}
				if err != nil {
					errs[k].add(err)
					// Start again from the object as it is.
					if rv, err = c.objectRV(ctx, path); err != nil {
						errs[k].add(err)
						return
					}
					continue
				}
				lats[k] = append(lats[k], took)
				ws.acked[k] = append(ws.acked[k], seq)
			}
		})
	}
	wg.Wait()
	ws.elapsed = time.Since(ws.start)
	for k := range objects {
		ws.lat = append(ws.lat, lats[k]...)
		ws.errs.merge(&errs[k])
	}
	return ws
}

// waitDelivered waits until every watcher received want events or ended,
// or ctx ends. Polling does not skew the figures: each event's receive
// time was taken when it arrived.
func waitDelivered(ctx context.Context, watchers []*watcher, want int64) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		done := true
		for _, w := range watchers {
			if w.received.Load() < want && !w.finished.Load() {
				done = false
				break
			}
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// analyzeWatchers checks each watcher's events against the acknowledged
// updates and measures delivery.
func analyzeWatchers(watchers []*watcher, ws *watchWrites) Fields {
	var lat, established []time.Duration
	var last time.Time
	var errs errorSamples
	delivered, bookmarks := 0, 0
	missedW, dupW, reorderW, missedEvents := 0, 0, 0, 0
	expected := 0
	for _, a := range ws.acked {
		expected += len(a)
	}
	for _, w := range watchers {
		established = append(established, w.established)
		bookmarks += w.bookmarks
		if w.err != nil {
			errs.add(w.err)
		}
		seen := make([]map[int]bool, len(ws.acked))
		for k := range seen {
			seen[k] = map[int]bool{}
		}
		maxSeq := make([]int, len(ws.acked))
		var prevRV uint64
		dup, reordered := false, false
		for _, e := range w.events {
			if e.obj >= len(seen) {
				continue
			}
			if seen[e.obj][e.seq] {
				dup = true
				continue
			}
			// A watch delivers events in resourceVersion order, and each
			// writer's updates in the order it made them.
			if e.rvOK {
				if e.rv <= prevRV {
					reordered = true
				}
				prevRV = e.rv
			}
			if e.seq < maxSeq[e.obj] {
				reordered = true
			}
			seen[e.obj][e.seq] = true
			maxSeq[e.obj] = max(maxSeq[e.obj], e.seq)
			if e.sent > 0 {
				lat = append(lat, e.recv.Sub(time.Unix(0, e.sent)))
			}
			if e.recv.After(last) {
				last = e.recv
			}
		}
		missed := 0
		for k, seqs := range ws.acked {
			for _, s := range seqs {
				if seen[k][s] {
					delivered++
				} else {
					missed++
				}
			}
		}
		missedEvents += missed
		if missed > 0 {
			missedW++
		}
		if dup {
			dupW++
		}
		if reordered {
			reorderW++
		}
	}
	var all time.Duration
	if !last.IsZero() {
		all = last.Sub(ws.start)
	}
	f := Fields{
		"events_expected":     expected * len(watchers),
		"events_delivered":    delivered,
		"events_missed":       missedEvents,
		"watchers_missed":     missedW,
		"watchers_duplicated": dupW,
		"watchers_reordered":  reorderW,
		"bookmarks":           bookmarks,
		"all_delivered_ms":    ms(all),
		"events_per_sec":      perSec(delivered, all),
		"complete":            missedEvents == 0 && errs.count == 0,
		"watch_start_p50_ms":  ms(Summarize(established).P50),
		"watch_start_p99_ms":  ms(Summarize(established).P99),
		"watchers_failed":     errs.count,
	}
	f.add(Summarize(lat).Fields("delivery_"))
	if len(errs.samples) > 0 {
		f["watch_error_samples"] = errs.samples
	}
	return f
}
