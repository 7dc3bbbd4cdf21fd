// Package openapi serves the OpenAPI documents of api/openapi as
// kube-apiserver does: /openapi/v2 (JSON, or protobuf as kubectl asks,
// gzipped on request) and /openapi/v3 (an index of documents, then one
// document per group version, JSON or protobuf, immutable once named by
// its hash).
//
// The documents are generated (hack/openapi-gen) and embedded; what a
// response needs of one (compact JSON, its hash, gzip, protobuf) is
// computed once, on first use, so that starting the server costs nothing
// and serving costs a copy.
//
// Layers: cmd -> apiserver -> (this package) -> api/openapi.
package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/munnerz/goautoneg"
)

// Service serves the documents. Build it with New.
type Service struct {
	// generated are the documents of the built-in resources; current
	// what is served now: those, and the custom resources' (see
	// SetCustomResources). A request loads current once, with no lock.
	generated *documents
	current   atomic.Pointer[documents]

	// mu serializes SetCustomResources and SetRemote; custom keeps the
	// custom resources' documents of the last call, by path, and crs
	// what it was given; remote keeps the extension API servers'
	// documents, by path, and remoteList what SetRemote was given.
	mu         sync.Mutex
	custom     map[string]*madeFrom[[]CustomResource]
	crs        []CustomResource
	remote     map[string]*madeFrom[[]byte]
	remoteList []Remote
	remoteAll  []Remote
}

// documents is one state of what the service serves.
type documents struct {
	v2 *document
	v3 map[string]*document
	// index is the /openapi/v3 document, built on first use.
	index func() ([]byte, error)
}

// New serves the documents of fsys: "v2.json" at /openapi/v2 and each
// "v3/<path>.json" at /openapi/v3/<path>, with only the paths keep
// leaves (nil: all). It only lists them: each is read when first asked
// for. The documents may be indented; they are served compact.
func New(fsys fs.FS, keep PathFilter) (*Service, error) {
	now := time.Now()
	read := func(name string) func() ([]byte, error) {
		return func() ([]byte, error) { return fs.ReadFile(fsys, name) }
	}
	d := &documents{v2: newDocument("v2.json", read("v2.json"), now, v2Proto), v3: map[string]*document{}}
	err := fs.WalkDir(fsys, "v3", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		d.v3[strings.TrimSuffix(strings.TrimPrefix(p, "v3/"), ".json")] = newDocument(p, read(p), now, v3Proto)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	if keep != nil {
		filterDocuments(d, keep)
	}
	d.index = sync.OnceValues(d.buildIndex)
	s := &Service{generated: d}
	s.current.Store(d)
	return s, nil
}

// Install mounts /openapi/v2, /openapi/v3 and /openapi/v3/* on r. Every
// method is served, as kube serves them.
func (s *Service) Install(r chi.Router) {
	r.Handle("/openapi/v2", http.HandlerFunc(s.serveV2))
	r.Handle("/openapi/v3", http.HandlerFunc(s.serveV3Index))
	r.Handle("/openapi/v3/*", http.HandlerFunc(s.serveV3Document))
}

// document is one document and its encodings, each made once.
type document struct {
	// name, read and toProto are what newDocument was given: a filtered
	// copy reads the same.
	name     string
	read     func() ([]byte, error)
	toProto  func([]byte) ([]byte, error)
	modified time.Time
	// compact is the JSON served and its ETag (the upper-case hex SHA-512
	// of those bytes, as kube computes it).
	compact func() (encoded, error)
	proto   func() ([]byte, error)
	// gzipJSON and gzipProto are the gzipped JSON and protobuf.
	gzipJSON, gzipProto func() ([]byte, error)
}

type encoded struct {
	data []byte
	etag string
}

// newDocument prepares the document read reads (name names it in
// errors), whose protobuf encoding toProto makes from its JSON.
func newDocument(name string, read func() ([]byte, error), modified time.Time, toProto func([]byte) ([]byte, error)) *document {
	d := &document{name: name, read: read, toProto: toProto, modified: modified}
	d.compact = sync.OnceValues(func() (encoded, error) {
		raw, err := read()
		if err != nil {
			return encoded{}, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return encoded{}, fmt.Errorf("openapi: %s: %w", name, err)
		}
		return encoded{data: buf.Bytes(), etag: fmt.Sprintf("%X", sha512.Sum512(buf.Bytes()))}, nil
	})
	d.proto = sync.OnceValues(func() ([]byte, error) {
		c, err := d.compact()
		if err != nil {
			return nil, err
		}
		return toProto(c.data)
	})
	d.gzipJSON = gzipOnce(func() ([]byte, error) {
		c, err := d.compact()
		return c.data, err
	})
	d.gzipProto = gzipOnce(d.proto)
	return d
}

// gzipOnce returns the gzipped bytes of src, computed on first call.
func gzipOnce(src func() ([]byte, error)) func() ([]byte, error) {
	return sync.OnceValues(func() ([]byte, error) {
		data, err := src()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
}

// mediaType is a media type a document is served in.
type mediaType struct {
	typ, subtype string
	// contentType is what the response says it is.
	contentType string
	protobuf    bool
}

// negotiate returns the first of offered the Accept header allows, in the
// order of the header's (sorted) clauses, as kube-openapi's handlers do;
// ok is false when none is acceptable.
func negotiate(r *http.Request, offered []mediaType) (mediaType, bool) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, m := range offered {
			if (clause.Type == m.typ || clause.Type == "*") && (clause.SubType == m.subtype || clause.SubType == "*") {
				return m, true
			}
		}
	}
	return mediaType{}, false
}

// noCache marks a response not cacheable, as kube's filter chain marks
// every response that does not say otherwise.
func noCache(w http.ResponseWriter) {
	if _, ok := w.Header()["Cache-Control"]; !ok {
		w.Header().Set("Cache-Control", "no-cache, private")
	}
}

// quote is an ETag header value.
func quote(etag string) string { return strconv.Quote(etag) }
