package openapi

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// The media types of /openapi/v2. kubectl asks for the deprecated
// protobuf name; the response always carries the current one.
var v2MediaTypes = []mediaType{
	{typ: "application", subtype: "json", contentType: "application/json"},
	{typ: "application", subtype: "com.github.proto-openapi.spec.v2@v1.0+protobuf", contentType: "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", protobuf: true},
	{typ: "application", subtype: "com.github.proto-openapi.spec.v2.v1.0+protobuf", contentType: "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", protobuf: true},
}

// gzipMinSize is the smallest response kube compresses (its gzip
// handler's default).
const gzipMinSize = 1400

// serveV2 serves /openapi/v2: JSON or protobuf as Accept asks (406
// otherwise), with the JSON's hash as ETag for both (they differ by
// Vary: Accept), gzipped when the client accepts it.
func (s *Service) serveV2(w http.ResponseWriter, r *http.Request) {
	noCache(w)
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	h.Add("Vary", "Accept")
	m, ok := negotiate(r, v2MediaTypes)
	if !ok {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	v2 := s.current.Load().v2
	c, err := v2.compact()
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	data := c.data
	if m.protobuf {
		if data, err = v2.proto(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
	}
	h.Set("Content-Type", m.contentType)
	h.Set("Etag", quote(c.etag))
	// Whole responses go out gzipped from a copy made once; a range of
	// the document as is.
	if len(data) >= gzipMinSize && r.Header.Get("Range") == "" && acceptsGzip(r) {
		gz := v2.gzipJSON
		if m.protobuf {
			gz = v2.gzipProto
		}
		if z, err := gz(); err == nil {
			h.Set("Content-Encoding", "gzip")
			data = z
		}
	}
	http.ServeContent(w, r, "/openapi/v2", v2.modified, bytes.NewReader(data))
}

// acceptsGzip reports whether Accept-Encoding allows gzip (a q-value
// above 0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		q := 1.0
		if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
			q, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
		return q > 0
	}
	return false
}

// v2Proto is the gnostic protobuf encoding of a v2 JSON document.
func v2Proto(j []byte) ([]byte, error) {
	doc, err := openapiv2.ParseDocument(j)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(doc)
}
