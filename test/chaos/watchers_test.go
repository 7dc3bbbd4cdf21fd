package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// errGone is a watch's 410: the revision it resumes from is compacted
// or out of the watch cache; the watcher lists again.
var errGone = errors.New("410 Gone")

// epoch is what a watcher saw between two LISTs: the list, at revision
// start, then every event until the revision last (of its last event or
// BOOKMARK), across reconnections.
type epoch struct {
	start  int64
	listed map[string]int64 // namespace/name -> resourceVersion
	last   int64
	events map[string][]change
	// streams are the watches of the epoch, to explain a failure.
	streams []stream
}

// stream is one watch request: where it went and from which revision.
type stream struct {
	from    int64
	replica string
	at      time.Time
}

// watcher lists and watches ConfigMaps (of one namespace, or of all) over
// its failover, as a hand-written client does: it resumes from the last
// resourceVersion it saw when a watch ends, and lists again on 410.
type watcher struct {
	id        int
	namespace string // "" for all
	client    *http.Client
	rand      *rand.Rand
	// timeout is the timeoutSeconds of its watches (0: 3 to 10 s at
	// random, for reconnections).
	timeout int
	// away is how long it waits before it watches again: long for a few,
	// so that they come back after a compaction (410, a new list).
	away time.Duration

	mu         sync.Mutex
	epochs     []*epoch
	maxRV      int64 // the highest resourceVersion seen, to check none goes back
	problems   []string
	reconnects int
	ends       map[string]int // why watches ended, for the log
}

func newWatcher(id int, namespace string, f *failover) *watcher {
	return &watcher{id: id, namespace: namespace, client: f.httpClient(0), rand: rand.New(rand.NewPCG(uint64(id), 7)), ends: map[string]int{}, away: 50 * time.Millisecond}
}

func (w *watcher) path() string {
	if w.namespace == "" {
		return "/api/v1/configmaps"
	}
	return "/api/v1/namespaces/" + w.namespace + "/configmaps"
}

// run lists and watches until ctx ends.
func (w *watcher) run(ctx context.Context) {
	var cur *epoch
	for ctx.Err() == nil {
		if cur == nil {
			e, err := w.list(ctx)
			if err != nil {
				sleep(ctx, 200*time.Millisecond)
				continue
			}
			cur = e
		}
		err := w.watch(ctx, cur)
		if errors.Is(err, errGone) {
			cur = nil
			continue
		}
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		w.reconnects++
		w.ends[endClass(err)]++
		w.mu.Unlock()
		sleep(ctx, w.away)
	}
}

func (w *watcher) timeoutSeconds() int {
	if w.timeout > 0 {
		return w.timeout
	}
	return 3 + w.rand.IntN(8)
}

// objectMeta is the part of a ConfigMap or Status the watchers read.
type objectMeta struct {
	Kind     string `json:"kind"`
	Code     int    `json:"code"`
	Metadata struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

func (o objectMeta) key() string { return o.Metadata.Namespace + "/" + o.Metadata.Name }

// list starts an epoch with a consistent LIST.
func (w *watcher) list(ctx context.Context) (*epoch, error) {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []objectMeta `json:"items"`
	}
	if err := w.get(ctx, w.path(), &list); err != nil {
		return nil, err
	}
	e := &epoch{start: parseRV(list.Metadata.ResourceVersion), listed: map[string]int64{}, events: map[string][]change{}}
	e.last = e.start
	for _, it := range list.Items {
		e.listed[it.key()] = parseRV(it.Metadata.ResourceVersion)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observe("list", e.start, false)
	w.epochs = append(w.epochs, e)
	return e, nil
}

func (w *watcher) get(ctx context.Context, path string, into any) error {
	resp, err := w.open(ctx, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// open sends a GET of path to the watcher's replica.
func (w *watcher) open(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+path, nil)
	if err != nil {
		return nil, err
	}
	return w.client.Do(req)
}

// watch watches from e.last until the stream ends, adding what it sees
// to e.
func (w *watcher) watch(ctx context.Context, e *epoch) error {
	q := url.Values{"watch": {"true"}, "allowWatchBookmarks": {"true"},
		"resourceVersion": {strconv.FormatInt(e.last, 10)},
		"timeoutSeconds":  {strconv.Itoa(w.timeoutSeconds())}}
	st := stream{from: e.last, at: time.Now()}
	trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { st.replica = ci.Conn.RemoteAddr().String() }}
	resp, err := w.open(httptrace.WithClientTrace(ctx, trace), w.path()+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	w.mu.Lock()
	e.streams = append(e.streams, st)
	w.mu.Unlock()
	if resp.StatusCode == http.StatusGone {
		return errGone
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return statusError(resp.StatusCode)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string     `json:"type"`
			Object objectMeta `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		if err := w.event(e, ev.Type, ev.Object); err != nil {
			return err
		}
	}
}

// event adds one watch event to e.
func (w *watcher) event(e *epoch, typ string, obj objectMeta) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	rv := parseRV(obj.Metadata.ResourceVersion)
	switch typ {
	case "ERROR":
		if obj.Code == http.StatusGone {
			return errGone
		}
		return fmt.Errorf("watch error event: code %d", obj.Code)
	case "BOOKMARK":
		w.observe(typ, rv, false)
	case "ADDED", "MODIFIED", "DELETED":
		if rv <= e.last {
			w.problems = append(w.problems, fmt.Sprintf("%s %s at resourceVersion %d after %d in the same epoch", typ, obj.key(), rv, e.last))
		}
		w.observe(typ, rv, true)
		e.events[obj.key()] = append(e.events[obj.key()], change{rev: rv, deleted: typ == "DELETED"})
	default:
		return fmt.Errorf("unknown watch event type %q", typ)
	}
	if rv > e.last {
		e.last = rv
	}
	return nil
}

// observe records a resourceVersion the watcher was given (w.mu held):
// none may be lower than one seen before, and an event's must be higher.
func (w *watcher) observe(what string, rv int64, event bool) {
	if rv < w.maxRV || event && rv == w.maxRV {
		w.problems = append(w.problems, fmt.Sprintf("%s at resourceVersion %d after %d had been seen", what, rv, w.maxRV))
	}
	w.maxRV = max(w.maxRV, rv)
}

// caughtUp reports whether the watcher's current epoch has reached rev.
func (w *watcher) caughtUp(rev int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.epochs) > 0 && w.epochs[len(w.epochs)-1].last >= rev
}

// endClass names why a watch ended, for the log.
func endClass(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "end of stream"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "cut"
	}
	var se statusError
	if errors.As(err, &se) {
		return strconv.Itoa(int(se))
	}
	return "transport"
}

// statusError is a watch request's answer other than 200.
type statusError int

func (e statusError) Error() string { return "watch: " + http.StatusText(int(e)) }

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
