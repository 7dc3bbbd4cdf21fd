package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// podEvent is what a follower decodes of a watch event of a pod: the
// rest of the object is skipped, not copied.
type podEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata objectMeta `json:"metadata"`
		Spec     struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
		Message string `json:"message"` // an ERROR event's Status
		Code    int    `json:"code"`
	} `json:"object"`
}

// follower is one client following the pods of a selection as client-go's
// reflector does: a LIST (paged by pageSize, 0 for one page), then a WATCH
// from its resourceVersion, resumed from the last resourceVersion seen
// when the stream ends, and a new LIST when the server answers 410. It
// keeps the state it was told (name -> resourceVersion) and counts what a
// client would call a fault: an event not newer than the one before it on
// the stream (reordered or duplicated), a stream the server ended.
type follower struct {
	c        *Client
	path     string
	query    url.Values // the selection: fieldSelector, or nothing
	pageSize int
	timeout  string // timeoutSeconds of each watch
	// onEvent, when set, sees every ADDED, MODIFIED and DELETED event.
	onEvent func(ev *podEvent, recv time.Time)

	mu         sync.Mutex
	state      map[string]uint64
	lastRV     uint64
	outOfOrder int
	terminated int
	relists    int
	events     int
	err        error
}

func newFollower(c *Client, path string, query url.Values, pageSize int, deadline time.Duration) *follower {
	return &follower{c: c, path: path, query: query, pageSize: pageSize, state: map[string]uint64{},
		timeout: strconv.Itoa(int(deadline.Seconds()) + 1)}
}

// run follows until ctx ends; synced is called once the first LIST is in.
func (f *follower) run(ctx context.Context, synced func()) {
	once := sync.OnceFunc(synced)
	defer once()
	for ctx.Err() == nil {
		if err := f.list(ctx); err != nil {
			if ctx.Err() == nil {
				f.fail(fmt.Errorf("list %s: %w", f.path, err))
			}
			return
		}
		once()
		for ctx.Err() == nil {
			expired, err := f.watch(ctx)
			if ctx.Err() != nil {
				return
			}
			if expired {
				f.mu.Lock()
				f.relists++
				f.mu.Unlock()
				break
			}
			f.mu.Lock()
			f.terminated++
			f.mu.Unlock()
			if err != nil {
				time.Sleep(100 * time.Millisecond) // a refused watch: do not spin
			}
		}
	}
}

func (f *follower) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// list replaces the state with a LIST's.
func (f *follower) list(ctx context.Context) error {
	state, rv, err := listPods(ctx, f.c, f.path, f.query, f.pageSize)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.state, f.lastRV = state, rv
	f.mu.Unlock()
	return nil
}

// listPods reads a whole LIST of pods (names and resourceVersions) and its
// resourceVersion.
func listPods(ctx context.Context, c *Client, path string, query url.Values, pageSize int) (map[string]uint64, uint64, error) {
	state := map[string]uint64{}
	q := maps.Clone(query)
	if q == nil {
		q = url.Values{}
	}
	if pageSize > 0 {
		q.Set("limit", strconv.Itoa(pageSize))
	}
	for {
		resp, err := c.Do(ctx, http.MethodGet, path, q, nil, "", true)
		if err != nil {
			return nil, 0, err
		}
		var l listBody
		if err := json.Unmarshal(resp.Body, &l); err != nil {
			return nil, 0, fmt.Errorf("decoding list: %w", err)
		}
		for _, it := range l.Items {
			rv, _ := strconv.ParseUint(it.Metadata.ResourceVersion, 10, 64)
			state[it.Metadata.Name] = rv
		}
		if l.Metadata.Continue == "" {
			rv, err := strconv.ParseUint(l.Metadata.ResourceVersion, 10, 64)
			return state, rv, err
		}
		q.Set("continue", l.Metadata.Continue)
	}
}

// watch reads one watch stream from the last resourceVersion until it
// ends; expired reports a 410 (the caller lists again).
func (f *follower) watch(ctx context.Context) (expired bool, err error) {
	q := maps.Clone(f.query)
	if q == nil {
		q = url.Values{}
	}
	f.mu.Lock()
	q.Set("resourceVersion", strconv.FormatUint(f.lastRV, 10))
	f.mu.Unlock()
	q.Set("watch", "true")
	q.Set("allowWatchBookmarks", "true")
	q.Set("timeoutSeconds", f.timeout)
	resp, err := f.c.Stream(ctx, f.path, q)
	if err != nil {
		return isStatus(err, http.StatusGone), err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev podEvent
		if err := dec.Decode(&ev); err != nil {
			return false, err
		}
		recv := time.Now()
		if ev.Type == "ERROR" {
			return ev.Object.Code == http.StatusGone, errors.New(ev.Object.Message)
		}
		rv, err := strconv.ParseUint(ev.Object.Metadata.ResourceVersion, 10, 64)
		if err != nil {
			return false, fmt.Errorf("event resourceVersion %q", ev.Object.Metadata.ResourceVersion)
		}
		f.mu.Lock()
		if ev.Type != "BOOKMARK" {
			if rv <= f.lastRV {
				f.outOfOrder++
			}
			f.events++
			if ev.Type == "DELETED" {
				delete(f.state, ev.Object.Metadata.Name)
			} else {
				f.state[ev.Object.Metadata.Name] = rv
			}
		}
		f.lastRV = max(f.lastRV, rv)
		f.mu.Unlock()
		if f.onEvent != nil && ev.Type != "BOOKMARK" {
			f.onEvent(&ev, recv)
		}
	}
}

// differences counts the objects whose state differs from want: missing,
// extra, or at another resourceVersion.
func (f *follower) differences(want map[string]uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for name, rv := range want {
		if f.state[name] != rv {
			n++
		}
	}
	for name := range f.state {
		if _, ok := want[name]; !ok {
			n++
		}
	}
	return n
}

// followerStats sums what the followers counted.
type followerStats struct {
	outOfOrder, terminated, relists, events, failed int
	errs                                            errorSamples
}

func (s *followerStats) add(f *follower) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.outOfOrder += f.outOfOrder
	s.terminated += f.terminated
	s.relists += f.relists
	s.events += f.events
	if f.err != nil {
		s.failed++
		s.errs.add(f.err)
	}
}

func (s *followerStats) fields(prefix string) Fields {
	f := Fields{prefix + "events": s.events, prefix + "out_of_order": s.outOfOrder, prefix + "terminated": s.terminated,
		prefix + "relists": s.relists, prefix + "failed": s.failed}
	if len(s.errs.samples) > 0 {
		f[prefix+"error_samples"] = s.errs.samples
	}
	return f
}

// converge waits (up to wait) until every follower's state is what a
// fresh LIST of its selection says, and returns how many objects still
// differ: what a client lost (or was told twice) for good.
func converge(ctx context.Context, c *Client, followers []*follower, wait time.Duration) (int, error) {
	deadline := time.Now().Add(wait)
	for {
		lost := 0
		lists := map[string]map[string]uint64{}
		for _, f := range followers {
			key := f.path + "?" + f.query.Encode()
			want, ok := lists[key]
			if !ok {
				var err error
				if want, _, err = listPods(ctx, c, f.path, f.query, 500); err != nil {
					return 0, err
				}
				lists[key] = want
			}
			lost += f.differences(want)
		}
		if lost == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return lost, ctx.Err()
		}
		time.Sleep(500 * time.Millisecond)
	}
}
