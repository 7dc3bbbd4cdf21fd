package policy

import (
	"testing"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// step is one request of a transcript. NS in the path and body is the
// test's namespace.
type step = reference.Step

const (
	pdbsPath = "/apis/policy/v1/namespaces/NS/poddisruptionbudgets"
	podsPath = "/api/v1/namespaces/NS/pods"
)

// The steps' constructors, sent as the package's user agent.
var (
	steps   = reference.Steps{UserAgent: userAgent}
	request = steps.Request
	create  = steps.Create
	put     = steps.Put
	patch   = steps.Patch
	get     = steps.Get
	table   = steps.Table
)

// transcripts are replayed in order, each in a namespace of its own: a
// step sees what the earlier ones wrote.
var transcripts = map[string][]step{}

// TestTranscript replays the transcripts against the server and compares
// every answer (code, whole body, warnings) with kube-apiserver's. With
// -record it writes kube's answers instead.
func TestTranscript(t *testing.T) {
	tg := reference.For(t, srv)
	reference.Replay(t, tg, "testdata/transcript.json", transcripts, func(t *testing.T, _ string) *reference.Normalizer {
		n := reference.NewNormalizer(tg.TestNamespace(t, userAgent, podsPath, pdbsPath))
		n.HideListVersions = true
		return n
	})
}
