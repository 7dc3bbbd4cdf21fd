package openapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PathFilter says whether an API path of the generated documents is
// served ("/apis/apps/v1/namespaces/{namespace}/deployments", or a group
// version's own "/apis/apps/v1/"); nil serves all. kube's documents list
// only the versions and resources its --runtime-config leaves on; a
// filter does the same with the generated documents.
type PathFilter func(path string) bool

// filterDocuments drops from d the v3 documents whose group version (or
// group) keep turns off, and makes every other document, v2's included,
// list only the paths keep leaves. Documents are still read lazily.
func filterDocuments(d *documents, keep PathFilter) {
	d.v2 = d.v2.filtered(keep)
	for p, doc := range d.v3 {
		// The document of api/v1 is at /api/v1/, that of apis/apps at
		// /apis/apps/.
		if !keep("/" + p + "/") {
			delete(d.v3, p)
			continue
		}
		d.v3[p] = doc.filtered(keep)
	}
}

// filtered is the document with the paths keep drops removed from its
// "paths".
func (d *document) filtered(keep PathFilter) *document {
	return newDocument(d.name, func() ([]byte, error) {
		raw, err := d.read()
		if err != nil {
			return nil, err
		}
		return filterPaths(raw, keep)
	}, d.modified, d.toProto)
}

// filterPaths removes the paths keep drops from the OpenAPI document raw
// (v2 or v3: both keep them under "paths"). The definitions stay: kube's
// documents of a group version hold those its paths use, which a
// smaller set of paths still may.
func filterPaths(raw []byte, keep PathFilter) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	var paths map[string]json.RawMessage
	if err := json.Unmarshal(doc["paths"], &paths); err != nil {
		return nil, fmt.Errorf("openapi: paths: %w", err)
	}
	for p := range paths {
		if !keep(p) {
			delete(paths, p)
		}
	}
	kept, err := json.Marshal(paths)
	if err != nil {
		return nil, err
	}
	doc["paths"] = kept
	return json.Marshal(doc)
}

// APIPath splits an API path of the documents into its group ("" for
// the core group), version and top-level resource; resource is "" for a
// group's or a version's own path, version "" for a group's. ok is false
// for a path outside /api/v1 and /apis/GROUP.
func APIPath(path string) (group, version, resource string, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(path, "/api/"):
		rest = path[len("/api/"):]
	case strings.HasPrefix(path, "/apis/"):
		rest = path[len("/apis/"):]
		group, rest, _ = strings.Cut(rest, "/")
		if group == "" {
			return "", "", "", false
		}
	default:
		return "", "", "", false
	}
	segments := strings.FieldsFunc(rest, func(r rune) bool { return r == '/' })
	if len(segments) == 0 {
		return group, "", "", strings.HasPrefix(path, "/apis/")
	}
	version, segments = segments[0], segments[1:]
	if len(segments) > 0 && segments[0] == "watch" {
		segments = segments[1:]
	}
	switch {
	case len(segments) == 0:
	case len(segments) >= 3 && segments[0] == "namespaces" && segments[1] == "{namespace}":
		resource = segments[2]
	default:
		resource = segments[0]
	}
	return group, version, resource, true
}
