package openapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

// The media types of an /openapi/v3 document.
var v3MediaTypes = []mediaType{
	{typ: "application", subtype: "json", contentType: "application/json"},
	{typ: "application", subtype: "com.github.proto-openapi.spec.v3.v1.0+protobuf", contentType: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf", protobuf: true},
	{typ: "application", subtype: "com.github.proto-openapi.spec.v3@v1.0+protobuf", contentType: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf", protobuf: true},
}

// serverRelativeURL is where a document is served under its hash.
func serverRelativeURL(docPath, etag string) string {
	u := url.URL{Path: path.Join("/openapi/v3", docPath), RawQuery: url.Values{"hash": {etag}}.Encode()}
	return u.String()
}

// buildIndex is the /openapi/v3 document: the URL of every document,
// with its hash.
func (s *documents) buildIndex() ([]byte, error) {
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]entry `json:"paths"`
	}{Paths: map[string]entry{}}
	for p, d := range s.v3 {
		c, err := d.compact()
		if err != nil {
			return nil, err
		}
		index.Paths[p] = entry{ServerRelativeURL: serverRelativeURL(p, c.etag)}
	}
	return json.Marshal(index)
}

// serveV3Index serves /openapi/v3 as kube's aggregator does: whatever
// Accept says, with no ETag and as text/plain.
func (s *Service) serveV3Index(w http.ResponseWriter, r *http.Request) {
	noCache(w)
	data, err := s.current.Load().index()
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	http.ServeContent(w, r, "/openapi/v3", time.Now(), bytes.NewReader(data))
}

// serveV3Document serves /openapi/v3/<path>: 404 for a path not served,
// 406 for a media type not offered, a redirect to the current URL when
// the hash asked for is not the document's, and with the right hash a
// response cacheable for ever.
func (s *Service) serveV3Document(w http.ResponseWriter, r *http.Request) {
	noCache(w)
	docPath := strings.TrimPrefix(r.URL.Path, "/openapi/v3/")
	d, ok := s.current.Load().v3[docPath]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Add("Vary", "Accept")
	m, ok := negotiate(r, v3MediaTypes)
	if !ok {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	c, err := d.compact()
	if err != nil {
		slog.Error("openapi: building a document", "path", docPath, "error", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	data := c.data
	if m.protobuf {
		if data, err = d.proto(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
	}
	h.Set("Content-Type", m.contentType)
	h.Set("Etag", quote(c.etag))
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != c.etag {
			http.Redirect(w, r, serverRelativeURL(docPath, c.etag), http.StatusMovedPermanently)
			return
		}
		h.Set("Vary", "Accept")
		h.Set("Cache-Control", "public, immutable")
		h.Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
	}
	http.ServeContent(w, r, "", d.modified, bytes.NewReader(data))
}

// v3Proto is the gnostic protobuf encoding of a v3 JSON document.
func v3Proto(j []byte) ([]byte, error) {
	doc, err := openapiv3.ParseDocument(j)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(doc)
}
