package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// InitialEventsAnnotation marks the bookmark that ends the initial events
// of a watch (sendInitialEvents).
const InitialEventsAnnotation = metav1.InitialEventsAnnotationKey

// serveWatch streams the events of a watch, one JSON object per line,
// flushed as they come, until the client goes away, the timeout passes, or
// the watch ends. name, when set, watches one object.
func (s *Scope) serveWatch(w http.ResponseWriter, r *http.Request, watcher rest.Watcher, name string) {
	opts, err := parseListOptions(withWatch(r))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if name != "" {
		opts.FieldSelector = fields.AndSelectors(opts.FieldSelector, fields.OneTermEqualSelector("metadata.name", name))
	}
	ctx, _, _ := s.requestContext(r, "watch")
	out, err := negotiation.NegotiateWatchOutput(r, negotiation.TargetTable, negotiation.TargetPartialObjectMetadata)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	// The deadline travels with the context: the watch cache sends a last
	// bookmark shortly before it.
	ctx, cancel := context.WithTimeout(ctx, s.watchTimeout(opts.TimeoutSeconds))
	defer cancel()
	wch, err := watcher.Watch(ctx, opts)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	defer wch.Stop()

	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", negotiation.MediaTypeJSON)
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	enc := &eventEncoder{scope: s, r: r, out: out, bw: bufio.NewWriterSize(w, 8*1024), metrics: s.watchMetrics()}
	events := wch.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if err := enc.write(ev); err != nil {
				return
			}
			// Flush once the burst is written: one write per event
			// when events trickle, few when they pour.
			if len(events) == 0 {
				if enc.bw.Flush() != nil {
					return
				}
				if flusher != nil {
					flusher.Flush()
				}
			}
			if ev.Type == watch.Error {
				enc.bw.Flush()
				return
			}
		}
	}
}

// watchTimeout is the client's timeoutSeconds, or a random time between
// one and two MinRequestTimeouts so that watches do not all end together.
func (s *Scope) watchTimeout(timeoutSeconds *int64) time.Duration {
	if timeoutSeconds != nil && *timeoutSeconds > 0 {
		return time.Duration(*timeoutSeconds) * time.Second
	}
	base := s.MinRequestTimeout
	if base <= 0 {
		base = 30 * time.Minute
	}
	return base + time.Duration(rand.Int64N(int64(base)))
}

func withWatch(r *http.Request) *http.Request {
	if r.URL.Query().Get("watch") != "" {
		return r
	}
	r2 := r.Clone(r.Context())
	q := r2.URL.Query()
	q.Set("watch", "true")
	r2.URL.RawQuery = q.Encode()
	return r2
}

// eventEncoder writes watch events as JSON lines.
type eventEncoder struct {
	scope        *Scope
	r            *http.Request
	out          negotiation.Output
	bw           *bufio.Writer
	tableHeaders bool   // column definitions were sent
	scratch      []byte // reused for each event's object
	metrics      *watchMetrics
}

func (e *eventEncoder) write(ev storage.Event) error {
	before := e.bw.Buffered()
	e.bw.WriteString(`{"type":"`)
	e.bw.WriteString(string(ev.Type))
	e.bw.WriteString(`","object":`)
	var err error
	switch {
	case ev.Type == watch.Error:
		err = e.writeJSON(StatusOf(ev.Err))
	case ev.Type == watch.Bookmark && e.out.Target == negotiation.TargetPartialObjectMetadata:
		err = e.writeObject(e.bookmark(ev))
	case ev.Type == watch.Bookmark:
		err = e.writeJSON(e.bookmark(ev)) // bookmarks are never rows
	case e.out.Target == negotiation.TargetObject:
		e.scratch = ev.Object.AppendJSON(e.scratch[:0], true)
		_, err = e.bw.Write(e.scratch)
	default:
		obj := e.scope.Storage.New()
		if err = ev.Object.Decode(obj); err == nil {
			obj.GetObjectKind().SetGroupVersionKind(e.scope.Kind)
			err = e.writeObject(obj)
		}
	}
	if err != nil {
		return err
	}
	_, err = e.bw.WriteString("}\n")
	if after := e.bw.Buffered(); after > before && e.metrics != nil {
		e.metrics.events.Inc()
		e.metrics.sizes.Observe(float64(after - before))
	}
	return err
}

// writeObject writes obj in the negotiated representation.
func (e *eventEncoder) writeObject(obj runtime.Object) error {
	switch e.out.Target {
	case negotiation.TargetTable:
		table, err := e.scope.toTable(e.r, e.out, obj, !e.tableHeaders)
		if err != nil {
			return err
		}
		e.tableHeaders = true
		obj = table
	case negotiation.TargetPartialObjectMetadata:
		p, err := toPartialObjectMetadata(e.out, obj)
		if err != nil {
			return err
		}
		obj = p
	}
	return e.writeJSON(obj)
}

func (e *eventEncoder) writeJSON(obj runtime.Object) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = e.bw.Write(data)
	return err
}

// bookmark is the object of a BOOKMARK event: an empty object of the
// resource's kind carrying only the revision (and the initial-events-end
// annotation when it ends the initial events).
func (e *eventEncoder) bookmark(ev storage.Event) runtime.Object {
	obj := e.scope.Storage.New()
	obj.GetObjectKind().SetGroupVersionKind(e.scope.Kind)
	if m, err := meta.Accessor(obj); err == nil {
		_ = storage.SetResourceVersion(obj, ev.ResourceVersion)
		if ev.InitialEventsEnd {
			m.SetAnnotations(map[string]string{InitialEventsAnnotation: "true"})
		}
	}
	return obj
}

// Watch serves kube's legacy watch paths (/watch/...): a watch of the
// collection, or of the object named in the path when named is set.
func (s *Scope) Watch(watcher rest.Watcher, named bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := ""
		if named {
			_, _, name = s.requestContext(r, "watch")
		}
		s.serveWatch(w, r, watcher, name)
	}
}
