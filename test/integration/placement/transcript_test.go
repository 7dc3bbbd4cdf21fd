package placement

import (
	"testing"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// step is one request of a transcript. NS in the path and body is the
// test's namespace, which also names its cluster-scoped objects.
type step = reference.Step

const (
	jsonBody   = "application/json"
	mergePatch = "application/merge-patch+json"
	applyYAML  = "application/apply-patch+yaml"
	asTable    = "application/json;as=Table;v=v1;g=meta.k8s.io"
)

func request(name, method, path, contentType, accept, body string) step {
	return step{Name: name, Request: reference.Request{Method: method, Path: path, ContentType: contentType, Accept: accept, UserAgent: "placement-test", Body: body}}
}

func create(name, path, body string) step { return request(name, "POST", path, jsonBody, "", body) }
func put(name, path, body string) step    { return request(name, "PUT", path, jsonBody, "", body) }
func patch(name, path, body string) step  { return request(name, "PATCH", path, mergePatch, "", body) }
func get(name, path string) step          { return request(name, "GET", path, "", "", "") }
func table(name, path string) step        { return request(name, "GET", path, "", asTable, "") }
func del(name, path string) step          { return request(name, "DELETE", path, "", "", "") }

// transcripts are replayed in order, each in a namespace of its own: a
// step sees what the earlier ones wrote. The files of each group add
// theirs in init.
var transcripts = map[string][]step{}

const transcriptFile = "testdata/transcript.json"

// TestTranscript replays the transcripts against the server and compares
// every answer (code, whole body, warnings) with kube-apiserver's. With
// -record it writes kube's answers instead.
func TestTranscript(t *testing.T) {
	tg := testTarget(t)
	reference.Replay(t, tg.Target, transcriptFile, transcripts, func(t *testing.T, _ string) *reference.Normalizer {
		n := reference.NewNormalizer(tg.namespace(t))
		n.HideListVersions = true
		return n
	})
}
