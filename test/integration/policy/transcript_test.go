package policy

import (
	"testing"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// step is one request of a transcript. NS in the path and body is the
// test's namespace.
type step = reference.Step

const (
	jsonBody   = "application/json"
	mergePatch = "application/merge-patch+json"
	asTable    = "application/json;as=Table;v=v1;g=meta.k8s.io"
	pdbsPath   = "/apis/policy/v1/namespaces/NS/poddisruptionbudgets"
	podsPath   = "/api/v1/namespaces/NS/pods"
)

func request(name, method, path, contentType, accept, body string) step {
	return step{Name: name, Request: reference.Request{Method: method, Path: path, ContentType: contentType, Accept: accept, UserAgent: userAgent, Body: body}}
}

func create(name, path, body string) step { return request(name, "POST", path, jsonBody, "", body) }
func put(name, path, body string) step    { return request(name, "PUT", path, jsonBody, "", body) }
func patch(name, path, body string) step  { return request(name, "PATCH", path, mergePatch, "", body) }
func get(name, path string) step          { return request(name, "GET", path, "", "", "") }
func table(name, path string) step        { return request(name, "GET", path, "", asTable, "") }

// transcripts are replayed in order, each in a namespace of its own: a
// step sees what the earlier ones wrote.
var transcripts = map[string][]step{}

// TestTranscript replays the transcripts against the server and compares
// every answer (code, whole body, warnings) with kube-apiserver's. With
// -record it writes kube's answers instead.
func TestTranscript(t *testing.T) {
	tg := reference.For(t, srv)
	reference.Replay(t, tg, "testdata/transcript.json", transcripts, func(t *testing.T, _ string) *reference.Normalizer {
		n := reference.NewNormalizer(namespace(t, tg))
		n.HideListVersions = true
		return n
	})
}
