package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEveryResourceHasAFixture keeps the per-resource tests (Tables,
// kubectl, watch options) complete: every listed resource needs
// testdata/objects/<resource>.json and kube's kubectl header.
func TestEveryResourceHasAFixture(t *testing.T) {
	fixtures := map[string]bool{}
	for _, r := range fixtureResources(t) {
		fixtures[r] = true
	}
	for name := range servedResources(t) {
		if _, ok := testedElsewhere[name]; ok {
			continue
		}
		if !fixtures[name] {
			t.Errorf("%s has no fixture in testdata/objects", name)
		}
		if _, ok := kubectlHeaders[name]; !ok {
			t.Errorf("%s has no kubectl header in kubectl_test.go", name)
		}
	}
}

// testedElsewhere are the resources whose objects cannot be fixtures
// here, and the tests that cover them instead.
var testedElsewhere = map[string]string{
	// A definition's name is its plural and group, and it serves more
	// routes (and discovery) while it exists.
	"customresourcedefinitions": "test/integration/crd",
}

// watchEvent is one decoded event of a raw watch, whatever its encoding.
type watchEvent struct {
	typ         string
	name, rv    string
	annotations map[string]string
}

// decodeWatch decodes a watch body of JSON lines or protobuf frames.
func decodeWatch(t *testing.T, contentType string, body []byte) []watchEvent {
	t.Helper()
	var out []watchEvent
	add := func(typ string, obj metav1.Object) {
		out = append(out, watchEvent{typ: typ, name: obj.GetName(), rv: obj.GetResourceVersion(), annotations: obj.GetAnnotations()})
	}
	if contentType == "application/json" {
		scanner := bufio.NewScanner(bytes.NewReader(body))
		scanner.Buffer(nil, 1<<20)
		for scanner.Scan() {
			var ev struct {
				Type   string
				Object metav1.PartialObjectMetadata
			}
			if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
				t.Fatalf("%v: %s", err, scanner.Bytes())
			}
			add(ev.Type, &ev.Object)
		}
		return out
	}
	if contentType != mediaTypeProtobuf+";stream=watch" {
		t.Fatalf("content type %q", contentType)
	}
	for len(body) > 0 {
		if len(body) < 4 || int(binary.BigEndian.Uint32(body)) > len(body)-4 {
			t.Fatalf("truncated frame: %x", body)
		}
		n := int(binary.BigEndian.Uint32(body))
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(body[4 : 4+n]); err != nil {
			t.Fatal(err)
		}
		body = body[4+n:]
		obj := decodeProtobuf(t, ev.Object.Raw)
		if ev.Type == "ERROR" {
			t.Fatalf("error event: %#v", obj)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		add(ev.Type, m)
	}
	return out
}

// TestWatchOptionsEveryResource checks, for every resource, in JSON and
// in protobuf, the options informers use: a WatchList (sendInitialEvents,
// resourceVersionMatch=NotOlderThan, allowWatchBookmarks) sends every
// object then the initial-events-end bookmark; timeoutSeconds ends the
// stream; and bookmarks come only to watches that allow them.
func TestWatchOptionsEveryResource(t *testing.T) {
	ns, _ := tableFixtures(t)
	type result struct {
		name string
		err  error
	}
	var wg sync.WaitGroup
	results := make(chan result, 4*len(fixtureResources(t)))
	// Bounded: each watch has a budget of a second or three, which a
	// loaded machine misses when every resource's four watch at once.
	running := make(chan struct{}, 32)
	for _, res := range fixtureResources(t) {
		for _, accept := range []string{"application/json", mediaTypeProtobuf} {
			for _, allowBookmarks := range []bool{true, false} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					running <- struct{}{}
					defer func() { <-running }()
					name := fmt.Sprintf("%s %s allowWatchBookmarks=%v", res, accept, allowBookmarks)
					results <- result{name, checkWatchOptions(t, collectionPath(t, res, ns), accept, allowBookmarks)}
				}()
			}
		}
	}
	wg.Wait()
	close(results)
	var failures []string
	for r := range results {
		if r.err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", r.name, r.err))
		}
	}
	sort.Strings(failures)
	for _, f := range failures {
		t.Error(f)
	}
}

// checkWatchOptions runs the watches of TestWatchOptionsEveryResource on
// one collection (it may run on any goroutine: it reports, not fails).
func checkWatchOptions(t *testing.T, path, accept string, allow bool) error {
	list := do(t, req{path: path})
	var objects struct {
		Metadata metav1.ListMeta
		Items    []metav1.PartialObjectMetadata
	}
	if err := json.Unmarshal(list.body, &objects); err != nil || list.code != 200 {
		return fmt.Errorf("list: %d %v", list.code, err)
	}
	listRV, _ := strconv.ParseInt(objects.Metadata.ResourceVersion, 10, 64)
	want := map[string]bool{}
	for _, item := range objects.Items {
		want[item.Name] = true
	}

	if !allow {
		return checkWatchTimeout(t, path, accept, listRV, allow)
	}
	// The WatchList, read up to its bookmark. (Its initial events come
	// once the cache has caught up with etcd, a wait its timeoutSeconds
	// counts, as kube's: on a loaded machine a short one may end the
	// stream first.)
	events, err := watchUntilInitialEventsEnd(t, path+"?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=60", accept)
	if err != nil {
		return fmt.Errorf("watchlist: %v", err)
	}
	got := map[string]bool{}
	i := 0
	for ; i < len(events) && events[i].typ == "ADDED"; i++ {
		got[events[i].name] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("initial events %v, want %v", got, want)
	}
	if i == len(events) || events[i].typ != "BOOKMARK" || events[i].annotations[metav1.InitialEventsAnnotationKey] != "true" {
		return fmt.Errorf("no initial-events-end bookmark after the initial events: %+v", events)
	}
	if rv, _ := strconv.ParseInt(events[i].rv, 10, 64); rv < listRV {
		return fmt.Errorf("bookmark at %d, before the list's %d", rv, listRV)
	}

	return checkWatchTimeout(t, path, accept, listRV, allow)
}

// watchUntilInitialEventsEnd reads the watch at path up to the bookmark
// that ends its initial events (or its end), then closes it.
func watchUntilInitialEventsEnd(t *testing.T, path, accept string) ([]watchEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Accept", accept)
	resp, err := rawClient(t).Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%d: %.300s", resp.StatusCode, body)
	}
	contentType := resp.Header.Get("Content-Type")
	body := bufio.NewReader(resp.Body)
	var events []watchEvent
	for {
		var frame []byte
		if contentType == "application/json" {
			frame, err = body.ReadBytes('\n')
		} else {
			frame = make([]byte, 4)
			if _, err = io.ReadFull(body, frame); err == nil {
				frame = append(frame, make([]byte, binary.BigEndian.Uint32(frame))...)
				_, err = io.ReadFull(body, frame[4:])
			}
		}
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		ev := decodeWatch(t, contentType, frame)
		events = append(events, ev...)
		if len(ev) == 1 && ev[0].typ == "BOOKMARK" && ev[0].annotations[metav1.InitialEventsAnnotationKey] == "true" {
			return events, nil
		}
	}
}

// checkWatchTimeout watches from the list's revision, with or without
// bookmarks: nothing changes, so only bookmarks may come (when allowed),
// none older than the list, and timeoutSeconds ends the stream. (When a
// bookmark comes is the watch cache's: it may send one at the same
// revision, which kube's skips.)
func checkWatchTimeout(t *testing.T, path, accept string, listRV int64, allow bool) error {
	start := time.Now()
	r := do(t, req{path: fmt.Sprintf("%s?watch=true&resourceVersion=%d&allowWatchBookmarks=%v&timeoutSeconds=3", path, listRV, allow),
		headers: []string{"Accept: " + accept}})
	// Not before the timeout; well before the server's own (30 min or
	// more), however loaded the machine.
	if elapsed := time.Since(start); r.code != 200 || elapsed < 2*time.Second || elapsed > 30*time.Second {
		return fmt.Errorf("watch: %d after %v: %.300s", r.code, elapsed, r.body)
	}
	for _, ev := range decodeWatch(t, r.header.Get("Content-Type"), r.body) {
		rv, _ := strconv.ParseInt(ev.rv, 10, 64)
		if ev.typ != "BOOKMARK" || !allow || rv < listRV {
			return fmt.Errorf("unexpected event %+v", ev)
		}
	}
	return nil
}
