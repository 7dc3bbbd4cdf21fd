package handlers

import (
	"bufio"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
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
	out, err := s.mediaTypes().WatchOutput(r, s.outputTargets(negotiation.TargetPartialObjectMetadata)...)
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
	// A watch holds a write buffer only while it writes a burst: idle
	// watches (a kubelet's, most of the time) hold none, or 5,000 node
	// watches would keep 160 MB of buffers.
	defer enc.releaseBuffer()
	// The initial events of a WatchList are of no use to the client before
	// the bookmark that ends them: they go out in full buffers, not one
	// flush (and one gzip member) per event when the encoder keeps up
	// with the watch cache.
	writeEvents(ctx, r, wch, enc, stream, isWatchList)
}

// writeEvents writes the events of wch to stream until the watch ends or
// a write fails. initial is set while the initial events of a WatchList
// are still to come.
func writeEvents(ctx context.Context, r *http.Request, wch storage.Watcher, enc *eventEncoder, stream *watchStream, initial bool) {
	flush := func() bool { return enc.flush() && stream.Flush() == nil }
	for {
		// Events are taken in this goroutine (straight from the watch
		// cache's buffer when the watcher allows it), and the burst
		// written is flushed once no event is ready: one write per event
		// when events trickle, few when they pour.
		ev, status := storage.NextEvent(ctx, wch, false)
		if status == storage.Pending {
			// Nothing ready: the initial events (if any) are out, and
			// the watch gives back its flow control seats.
			request.WatchInitialized(r.Context())
			if !initial {
				if !flush() {
					return
				}
				enc.releaseBuffer()
			}
			ev, status = storage.NextEvent(ctx, wch, true)
		}
		if status != storage.Got {
			return
		}
		enc.takeBuffer(stream)
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

// watchBuffers are the write buffers of watches writing a burst.
var watchBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32*1024) }}

// takeBuffer gives the encoder a write buffer to w, unless it has one.
func (e *eventEncoder) takeBuffer(w io.Writer) {
	if e.bw == nil {
		e.bw = watchBuffers.Get().(*bufio.Writer)
		e.bw.Reset(w)
	}
}

// flush writes out what the encoder's buffer holds.
func (e *eventEncoder) flush() bool { return e.bw == nil || e.bw.Flush() == nil }

// releaseBuffer hands the encoder's buffer back (what it holds is
// dropped: flush first).
func (e *eventEncoder) releaseBuffer() {
	if e.bw != nil {
		e.bw.Reset(nil)
		watchBuffers.Put(e.bw)
		e.bw = nil
	}
}

// watchTimeout is the client's timeoutSeconds, or a random time between
// one and two MinRequestTimeouts so that watches do not all end together
// (or none, with a negative MinRequestTimeout).
func (s *Scope) watchTimeout(timeoutSeconds *int64) time.Duration {
	if timeoutSeconds != nil && *timeoutSeconds > 0 {
		// Seconds past what a Duration holds (2^63 ns, 292 years) would
		// overflow into a deadline already past: the longest one instead.
		if *timeoutSeconds > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(*timeoutSeconds) * time.Second
	}
	base := s.MinRequestTimeout
	switch {
	case base < 0:
		return math.MaxInt64
	case base == 0:
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
