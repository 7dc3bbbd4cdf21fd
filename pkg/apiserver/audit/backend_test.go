package audit

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// blockingWriter holds every write until released.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *blockingWriter) Close() error { return nil }

// TestLogBackendNeverBlocks: with the writer stuck, events fill the buffer
// and the rest are dropped and counted, without waiting; once the writer
// moves, Shutdown writes what was buffered, one JSON event a line.
func TestLogBackendNeverBlocks(t *testing.T) {
	w := &blockingWriter{release: make(chan struct{})}
	m := NewMetrics(nil)
	b := NewLogBackend(w, 2, m)
	before := testutil.ToFloat64(m.errorTotal.WithLabelValues(pluginLog))
	for i := 0; i < 10; i++ {
		b.ProcessEvent(&auditv1.Event{AuditID: "x", Level: auditv1.LevelMetadata})
	}
	// One event is taken by the writer (stuck), two wait in the buffer.
	if dropped := testutil.ToFloat64(m.errorTotal.WithLabelValues(pluginLog)) - before; dropped < 7 {
		t.Errorf("dropped %v events, want at least 7", dropped)
	}
	close(w.release)
	b.Shutdown()
	lines := bytes.Split(bytes.TrimSpace(w.buf.Bytes()), []byte("\n"))
	if len(lines) < 2 || len(lines) > 3 {
		t.Fatalf("%d lines written:\n%s", len(lines), w.buf.Bytes())
	}
	var ev auditv1.Event
	if err := json.Unmarshal(lines[0], &ev); err != nil || ev.AuditID != "x" {
		t.Errorf("line %s: %v", lines[0], err)
	}
	b.ProcessEvent(&auditv1.Event{}) // after Shutdown: dropped, no panic
}

// TestBlockingLogBackend: kube's blocking mode: ProcessEvent returns once
// its event is written; none is dropped, however many.
func TestBlockingLogBackend(t *testing.T) {
	var buf bytes.Buffer
	m := NewMetrics(nil)
	b := NewBlockingLogBackend(nopWriteCloser{&buf}, m)
	before := testutil.ToFloat64(m.errorTotal.WithLabelValues(pluginLog))
	for i := range 100 {
		b.ProcessEvent(&auditv1.Event{AuditID: "x", Level: auditv1.LevelMetadata})
		if n := bytes.Count(buf.Bytes(), []byte("\n")); n != i+1 {
			t.Fatalf("%d lines written after %d events", n, i+1)
		}
	}
	if dropped := testutil.ToFloat64(m.errorTotal.WithLabelValues(pluginLog)) - before; dropped != 0 {
		t.Errorf("dropped %v events", dropped)
	}
	b.Shutdown()
}

type nopWriteCloser struct{ *bytes.Buffer }

func (nopWriteCloser) Close() error { return nil }
