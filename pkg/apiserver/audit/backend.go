package audit

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// Sink receives the events of audited requests. ProcessEvent runs on the
// request's path: the request waits for it, so only a sink asked to block
// (kube's blocking mode) may.
type Sink interface {
	ProcessEvent(ev *auditv1.Event)
}

// Metrics are a server's audit metrics, kube's: the requests' Contexts
// and the server's LogBackend record in them.
type Metrics struct {
	eventTotal             prometheus.Counter
	errorTotal, levelTotal *prometheus.CounterVec
}

// NewMetrics creates the audit metrics on reg (nil: registered nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		eventTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_audit_event_total",
			Help: "Counter of audit events generated and sent to the audit backend.",
		}),
		errorTotal: metrics.NewCounterVec(reg, "apiserver_audit_error_total",
			"Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.", "plugin"),
		levelTotal: metrics.NewCounterVec(reg, "apiserver_audit_level_total",
			"Counter of policy levels for audit events (1 per request).", "level"),
	}
	metrics.Register(reg, m.eventTotal)
	return m
}

// unregistered are the metrics of the parts given none (tests).
var unregistered = NewMetrics(nil)

// orUnregistered is m, or unregistered when nil.
func (m *Metrics) orUnregistered() *Metrics {
	if m == nil {
		return unregistered
	}
	return m
}

// pluginLog is the plugin label of the log backend's errors.
const pluginLog = "log"

// LogBackend writes events as JSON lines (kube's --audit-log-format=json).
// Built by NewLogBackend it writes from one goroutine, through a buffer of
// bufferSize events: a request never waits for the disk, and when the
// buffer is full the event is dropped and counted
// (apiserver_audit_error_total{plugin="log"}), as kube's batch mode does.
// Built by NewBlockingLogBackend it writes each event before
// ProcessEvent returns, as kube's blocking mode: no event is dropped, and
// a slow disk holds the requests.
type LogBackend struct {
	out     io.WriteCloser
	metrics *Metrics
	events  chan *auditv1.Event // nil when blocking
	done    chan struct{}

	mu     sync.RWMutex // guards closed against ProcessEvent's send
	closed bool
	write  sync.Mutex // one blocking write at a time
}

// NewLogBackend starts writing to out, counting its errors in m (nil:
// unregistered); Shutdown stops it and closes out.
func NewLogBackend(out io.WriteCloser, bufferSize int, m *Metrics) *LogBackend {
	b := &LogBackend{out: out, metrics: m.orUnregistered(), events: make(chan *auditv1.Event, bufferSize), done: make(chan struct{})}
	go b.run()
	return b
}

// NewBlockingLogBackend writes to out as ProcessEvent is called,
// counting its errors in m (nil: unregistered); Shutdown closes out.
func NewBlockingLogBackend(out io.WriteCloser, m *Metrics) *LogBackend {
	done := make(chan struct{})
	close(done)
	return &LogBackend{out: out, metrics: m.orUnregistered(), done: done}
}

// ProcessEvent implements Sink.
func (b *LogBackend) ProcessEvent(ev *auditv1.Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.drop(errors.New("the audit log is shut down"), ev)
		return
	}
	if b.events == nil {
		b.write.Lock()
		defer b.write.Unlock()
		b.writeEvent(ev)
		return
	}
	select {
	case b.events <- ev:
	default:
		b.drop(errors.New("the audit buffer is full"), ev)
	}
}

func (b *LogBackend) drop(err error, ev *auditv1.Event) {
	b.metrics.errorTotal.WithLabelValues(pluginLog).Inc()
	slog.Debug("audit: event dropped", "error", err, "auditID", ev.AuditID, "stage", ev.Stage)
}

func (b *LogBackend) run() {
	defer close(b.done)
	for ev := range b.events {
		b.writeEvent(ev)
	}
}

func (b *LogBackend) writeEvent(ev *auditv1.Event) {
	data, err := json.Marshal(ev)
	if err == nil {
		_, err = b.out.Write(append(data, '\n'))
	}
	if err != nil {
		b.metrics.errorTotal.WithLabelValues(pluginLog).Inc()
		slog.Error("audit: writing an event", "error", err, "auditID", ev.AuditID)
	}
}

// Shutdown writes the events buffered, then closes the output.
func (b *LogBackend) Shutdown() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	if b.events != nil {
		close(b.events)
	}
	b.mu.Unlock()
	<-b.done
	if err := b.out.Close(); err != nil {
		slog.Error("audit: closing the log", "error", err)
	}
}
