package batch

import (
	"testing"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// step is one request of a transcript. NS in the path and body is the
// test's namespace.
type step = reference.Step

const (
	jobsPath    = "/apis/batch/v1/namespaces/NS/jobs"
	cronJobPath = "/apis/batch/v1/namespaces/NS/cronjobs"
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
	del     = steps.Delete
)

// transcripts are replayed in order, each in a namespace of its own: a
// step sees what the earlier ones wrote. The files of each kind add
// theirs in init.
var transcripts = map[string][]step{}

const transcriptFile = "testdata/transcript.json"

// TestTranscript replays the transcripts against the server and compares
// every answer (code, whole body, warnings) with kube-apiserver's. With
// -record it writes kube's answers instead.
func TestTranscript(t *testing.T) {
	tg := reference.For(t, srv)
	reference.Replay(t, tg, transcriptFile, transcripts, func(t *testing.T, _ string) *reference.Normalizer {
		n := reference.NewNormalizer(tg.TestNamespace(t, userAgent, "/apis/batch/v1/namespaces/NS/jobs", "/apis/batch/v1/namespaces/NS/cronjobs"))
		n.HideListVersions = true
		return n
	})
}
