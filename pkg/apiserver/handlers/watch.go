package handlers

import (
	"bufio"
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// InitialEventsAnnotation marks the bookmark that ends the initial events
// of a watch (sendInitialEvents).
const InitialEventsAnnotation = metav1.InitialEventsAnnotationKey

type watchesEndKey struct{}

// WithWatchesEnding returns ctx carrying end: once end is done (the server
// shuts down), every watch served under ctx ends, its stream closed
// cleanly so that its client watches again (from another replica); other
// requests go on to their end.
func WithWatchesEnding(ctx, end context.Context) context.Context {
	return context.WithValue(ctx, watchesEndKey{}, end)
}

// serveWatch streams the events of a watch, flushed as they come, until
// the client goes away, the timeout passes, or the watch ends: one JSON
// object per line, or length-delimited protobuf frames. name, when set,
// watches one object.
func (s *Scope) serveWatch(w http.ResponseWriter, r *http.Request, watcher rest.Watcher, name string) {
	opts, err := parseListOptions(withWatch(r))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if name != "" {
		opts.FieldSelector = fields.AndSelectors(opts.FieldSelector, fields.OneTermEqualSelector("metadata.name", name))
	}
	ctx, _, _ := s.requestContext(r)
	out, err := s.mediaTypes().WatchOutput(r, negotiation.TargetTable, negotiation.TargetPartialObjectMetadata)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	enc, err := s.newEventEncoder(r, out)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	// The deadline travels with the context: the watch cache sends a last
	// bookmark shortly before it.
	ctx, cancel := context.WithTimeout(ctx, s.watchTimeout(opts.TimeoutSeconds))
	defer cancel()
	if end, ok := r.Context().Value(watchesEndKey{}).(context.Context); ok {
		defer context.AfterFunc(end, cancel)()
	}
	wch, err := watcher.Watch(ctx, opts)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	defer wch.Stop()

	// kube compresses the stream of a WatchList (initial events ended by a
	// bookmark) when the client accepts gzip, never other watches.
	isWatchList := opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks
	stream := newWatchStream(w, out.MediaType, isWatchList && acceptsGzip(r))
	defer stream.Close()
	bw := bufio.NewWriterSize(stream, 32*1024)
	enc.bw = bw
	// The initial events of a WatchList are of no use to the client before
	// the bookmark that ends them: they go out in full buffers, not one
	// flush (and one gzip member) per event when the encoder keeps up
	// with the watch cache.
	initial := isWatchList
	flush := func() bool { return bw.Flush() == nil && stream.Flush() == nil }
	for {
		// Events are taken in this goroutine (straight from the watch
		// cache's buffer when the watcher allows it), and the burst
		// written is flushed once no event is ready: one write per event
		// when events trickle, few when they pour.
		ev, status := storage.NextEvent(ctx, wch, false)
		if status == storage.Pending {
			if !initial && !flush() {
				return
			}
			ev, status = storage.NextEvent(ctx, wch, true)
		}
		if status != storage.Got {
			return
		}
		if err := enc.write(ev); err != nil {
			return
		}
		switch {
		case ev.Type == watch.Error:
			flush()
			return
		case ev.Type == watch.Bookmark && ev.InitialEventsEnd:
			initial = false
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

// Watch serves kube's legacy watch paths (/watch/...): a watch of the
// collection, or of the object named in the path when named is set.
func (s *Scope) Watch(watcher rest.Watcher, named bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := ""
		if named {
			_, _, name = s.requestContext(r)
		}
		s.serveWatch(w, r, watcher, name)
	}
}
