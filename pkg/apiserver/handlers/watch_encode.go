package handlers

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// eventEncoder writes the events of one watch, as JSON lines or as
// protobuf frames (a 4-byte big-endian length, then a metav1.WatchEvent
// whose object is the embedded object's full protobuf encoding, "k8s\0"
// and its runtime.Unknown envelope: what client-go's protobuf decoder
// reads).
//
// What is the same for every watcher of an event (the object's protobuf
// encoding, its PartialObjectMetadata) is computed once per event through
// the storage.Object's Encoded memo; JSON objects are the stored bytes.
// Tables are per watch: only the first carries the column definitions.
type eventEncoder struct {
	scope        *Scope
	r            *http.Request
	out          negotiation.Output
	bw           *bufio.Writer
	include      metav1.IncludeObjectPolicy
	tableHeaders bool // column definitions were sent
	// format names the embedded encoding in the objects' memo.
	format  string
	scratch []byte // reused for each event
	obj     bytes.Buffer
	size    int // bytes written of the current event
	metrics *watchMetrics
}

func (s *Scope) newEventEncoder(r *http.Request, out negotiation.Output) (*eventEncoder, error) {
	e := &eventEncoder{scope: s, r: r, out: out, metrics: s.watchMetrics()}
	if out.Target == negotiation.TargetTable {
		include, err := tableIncludeObject(r)
		if err != nil {
			return nil, err
		}
		e.include = include
	}
	e.format = out.Info.MediaType + ";" + s.Kind.String()
	if out.Target != negotiation.TargetObject {
		e.format += ";as=" + string(out.Target) + ";v=" + out.TargetVersion
	}
	return e, nil
}

func (e *eventEncoder) write(ev storage.Event) error {
	e.size = 0
	var err error
	if e.out.Protobuf() {
		err = e.writeFrame(ev)
	} else {
		err = e.writeLine(ev)
	}
	if err != nil {
		return err
	}
	if e.metrics != nil {
		e.metrics.events.Inc()
		e.metrics.sizes.Observe(float64(e.size))
	}
	return nil
}

// put writes p to the response and counts it in the event's size.
func (e *eventEncoder) put(p []byte) error {
	n, err := e.bw.Write(p)
	e.size += n
	return err
}

func (e *eventEncoder) putString(p string) error {
	n, err := e.bw.WriteString(p)
	e.size += n
	return err
}

// writeLine writes {"type":...,"object":...} and a newline.
func (e *eventEncoder) writeLine(ev storage.Event) error {
	e.putString(`{"type":"`)
	e.putString(string(ev.Type))
	e.putString(`","object":`)
	var err error
	switch {
	case ev.Type == watch.Error:
		err = e.writeJSON(e.status(ev.Err))
	case ev.Type == watch.Bookmark:
		err = e.writeJSON(e.transform(e.bookmark(ev)))
	case e.out.Target == negotiation.TargetObject:
		e.scratch = ev.Object.AppendJSON(e.scratch[:0], true)
		err = e.put(e.scratch)
	case e.out.Target == negotiation.TargetTable:
		// Rows carry the time of writing (AGE) and the first carries
		// the columns: nothing to share.
		var obj runtime.Object
		if obj, err = e.decode(ev.Object); err == nil {
			err = e.writeJSON(e.transform(obj))
		}
	default:
		var data []byte
		data, err = ev.Object.Encoded(e.format, func() ([]byte, error) { return e.encodeObject(ev.Object, json.Marshal) })
		if err == nil {
			err = e.put(data)
		}
	}
	if err != nil {
		return err
	}
	return e.putString("}\n")
}

// writeFrame writes one length-delimited protobuf WatchEvent.
func (e *eventEncoder) writeFrame(ev storage.Event) error {
	var raw []byte
	var err error
	switch {
	case ev.Type == watch.Error:
		raw, err = e.protobuf(e.status(ev.Err))
	case ev.Type == watch.Bookmark:
		raw, err = e.protobuf(e.transform(e.bookmark(ev)))
	default:
		raw, err = ev.Object.Encoded(e.format, func() ([]byte, error) { return e.encodeObject(ev.Object, e.protobuf) })
	}
	if err != nil {
		return err
	}
	event := metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}}
	n := event.Size()
	if cap(e.scratch) < 4+n {
		e.scratch = make([]byte, 4+n)
	}
	frame := e.scratch[:4+n]
	binary.BigEndian.PutUint32(frame, uint32(n))
	if _, err := event.MarshalToSizedBuffer(frame[4:]); err != nil {
		return err
	}
	err = e.put(frame)
	return err
}

// encodeObject decodes a stored object and encodes it in the watch's
// representation with encode.
func (e *eventEncoder) encodeObject(o *storage.Object, encode func(any) ([]byte, error)) ([]byte, error) {
	obj, err := e.decode(o)
	if err != nil {
		return nil, err
	}
	return encode(e.transform(obj))
}

func (e *eventEncoder) decode(o *storage.Object) (runtime.Object, error) {
	obj := e.scope.Storage.New()
	if err := o.Decode(obj); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(e.scope.Kind)
	return obj, nil
}

// protobuf is the full protobuf encoding of obj ("k8s\0" and the
// envelope), as kube embeds it in a WatchEvent. The result is a new slice:
// the memo keeps it.
func (e *eventEncoder) protobuf(obj any) ([]byte, error) {
	e.obj.Reset()
	if err := e.out.Info.Serializer.Encode(obj.(runtime.Object), &e.obj); err != nil {
		return nil, err
	}
	return bytes.Clone(e.obj.Bytes()), nil
}

// transform converts obj to the watch's representation. As kube's, a
// failure is logged and the object goes out as it is.
func (e *eventEncoder) transform(obj runtime.Object) runtime.Object {
	var out runtime.Object
	var err error
	switch e.out.Target {
	case negotiation.TargetObject:
		return obj
	case negotiation.TargetTable:
		// As kube: a bookmark becomes a row too.
		var table *metav1.Table
		table, err = e.scope.toTable(e.r, e.out, obj, e.include, !e.tableHeaders)
		if err == nil {
			e.tableHeaders = true
		}
		out = table
	default:
		out, err = toPartialObjectMetadata(e.scope, e.out, obj)
	}
	if err != nil {
		logTransformError(obj, err)
		return obj
	}
	return out
}

func (e *eventEncoder) writeJSON(obj runtime.Object) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return e.put(data)
}

// bookmark is the object of a BOOKMARK event: an empty object of the
// resource's kind carrying only the revision (and the initial-events-end
// annotation when it ends the initial events).
func (e *eventEncoder) bookmark(ev storage.Event) runtime.Object {
	obj := e.scope.Storage.New()
	obj.GetObjectKind().SetGroupVersionKind(e.scope.Kind)
	if m, err := metaAccessor(obj); err == nil {
		_ = storage.SetResourceVersion(obj, ev.ResourceVersion)
		if ev.InitialEventsEnd {
			m.SetAnnotations(map[string]string{InitialEventsAnnotation: "true"})
		}
	}
	return obj
}

// watchStream is the body of a watch response. Compressed, as kube's, each
// flush ends a gzip member, so that every event the server flushes reaches
// the client whole and no compressor state is held between bursts.
type watchStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	gzip    bool
	gw      *gzip.Writer
}

// newWatchStream writes the response header of a watch and flushes it.
func newWatchStream(w http.ResponseWriter, mediaType string, compress bool) *watchStream {
	s := &watchStream{w: w, gzip: compress}
	s.flusher, _ = w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", mediaType)
	h.Set("Cache-Control", "no-cache, private")
	if compress {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
	}
	w.WriteHeader(http.StatusOK)
	if s.flusher != nil {
		s.flusher.Flush()
	}
	return s
}

func (s *watchStream) Write(p []byte) (int, error) {
	if !s.gzip {
		return s.w.Write(p)
	}
	if s.gw == nil {
		s.gw = gzipPool.Get().(*gzip.Writer)
		s.gw.Reset(s.w)
	}
	return s.gw.Write(p)
}

// Flush sends what was written to the client. A compressed member is
// sync-flushed before it is closed, as kube's: a gzip reader hands out the
// data before the member's end, so a client is not left waiting on the
// next member's header to see the last event.
func (s *watchStream) Flush() error {
	if s.gw != nil {
		if err := s.gw.Flush(); err != nil {
			return err
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	if s.flusher != nil {
		s.flusher.Flush()
	}
	return nil
}

// Close ends the current gzip member, if any.
func (s *watchStream) Close() error {
	if s.gw == nil {
		return nil
	}
	err := s.gw.Close()
	s.gw.Reset(nil)
	gzipPool.Put(s.gw)
	s.gw = nil
	return err
}

// status is the Status an ERROR event carries.
func (e *eventEncoder) status(err error) *metav1.Status {
	return StatusOf(generic.InterpretWatchError(err, e.scope.Resource.GroupResource()))
}
