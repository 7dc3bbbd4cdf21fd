package admission

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// Step is one plugin of a Chain, under its name (kube's plugin name),
// which its metrics carry.
type Step struct {
	Name string
	handlers.Admission
}

// Chain runs its steps in order; the first error wins. Those that are
// handlers.MutatingAdmission too mutate, in order, through Admit. Each
// step's time, and each whole pass's, are recorded in Metrics, as kube
// records its admission steps and controllers. Two differences remain: a
// step is timed at validation even where its Validate does nothing (kube
// times only plugins that validate), and what the registry's hooks
// mutate for a plugin (LimitRanger's defaults) is not timed as its admit.
type Chain struct {
	Steps   []Step
	Metrics *Metrics // nil: nothing recorded
}

// The step types of the metrics (kube's).
const (
	stepAdmit    = "admit"
	stepValidate = "validate"
)

// Validate implements handlers.Admission.
func (c Chain) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	return c.run(a, stepValidate, func(s Step) (bool, error) { return true, s.Validate(ctx, a, obj) })
}

// Admit implements handlers.MutatingAdmission: the steps that mutate, in
// order, before any validates.
func (c Chain) Admit(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	return c.run(a, stepAdmit, func(s Step) (bool, error) {
		m, ok := s.Admission.(handlers.MutatingAdmission)
		if !ok {
			return false, nil
		}
		return true, m.Admit(ctx, a, obj)
	})
}

// ValidateConnect implements handlers.ConnectAdmission: the steps that
// handle connect requests, in order.
func (c Chain) ValidateConnect(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	return c.run(a, stepValidate, func(s Step) (bool, error) {
		v, ok := s.Admission.(handlers.ConnectAdmission)
		if !ok {
			return false, nil
		}
		return true, v.ValidateConnect(ctx, a, obj)
	})
}

// AdmitConnect implements handlers.MutatingConnectAdmission: the mutating
// steps that handle connect requests, in order, before ValidateConnect.
func (c Chain) AdmitConnect(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	return c.run(a, stepAdmit, func(s Step) (bool, error) {
		m, ok := s.Admission.(handlers.MutatingConnectAdmission)
		if !ok {
			return false, nil
		}
		return true, m.AdmitConnect(ctx, a, obj)
	})
}

// run calls call on each step until one fails, timing each step that
// took part (call reports whether it did) and the whole pass.
func (c Chain) run(a handlers.Attributes, stepType string, call func(Step) (bool, error)) error {
	if c.Metrics == nil {
		for _, s := range c.Steps {
			if _, err := call(s); err != nil {
				return err
			}
		}
		return nil
	}
	// One clock reading per step: a step ends when the next begins.
	start := time.Now()
	last := start
	var err error
	for _, s := range c.Steps {
		var took bool
		took, err = call(s)
		now := time.Now()
		if took {
			c.Metrics.observeController(s.Name, stepType, a.Operation, err, now.Sub(last))
		}
		last = now
		if err != nil {
			break
		}
	}
	c.Metrics.observeStep(stepType, a.Operation, err, last.Sub(start))
	return err
}

// Metrics are kube's admission latency metrics: a whole pass of the
// mutating or validating step, and each plugin's part in it.
type Metrics struct {
	step        *prometheus.HistogramVec
	stepSummary *prometheus.SummaryVec
	controller  *prometheus.HistogramVec
	observers   sync.Map // observerKey -> prometheus.Observer
}

// admissionBuckets are kube's: 5 ms to 2.5 s.
var admissionBuckets = []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}

// NewMetrics creates the admission metrics on reg (nil: registered
// nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		step: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Subsystem: "admission", Name: "step_admission_duration_seconds",
			Help:    "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
			Buckets: admissionBuckets,
		}, []string{"type", "operation", "rejected"}),
		stepSummary: prometheus.NewSummaryVec(prometheus.SummaryOpts{
			Namespace: "apiserver", Subsystem: "admission", Name: "step_admission_duration_seconds_summary",
			Help:   "[ALPHA] Admission sub-step latency summary in seconds, broken out for each operation and API resource and step type (validate or admit).",
			MaxAge: 5 * time.Hour,
		}, []string{"type", "operation", "rejected"}),
		controller: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Subsystem: "admission", Name: "controller_admission_duration_seconds",
			Help:    "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: admissionBuckets,
		}, []string{"name", "type", "operation", "rejected"}),
	}
	metrics.Register(reg, m.step, m.stepSummary, m.controller)
	return m
}

func (m *Metrics) observeStep(stepType string, op handlers.Operation, err error, elapsed time.Duration) {
	if m == nil {
		return
	}
	k := observerKey{stepType: stepType, op: op, rejected: err != nil}
	m.observer(k, m.step).Observe(elapsed.Seconds())
	k.summary = true
	m.observer(k, m.stepSummary).Observe(elapsed.Seconds())
}

func (m *Metrics) observeController(name, stepType string, op handlers.Operation, err error, elapsed time.Duration) {
	if m == nil {
		return
	}
	k := observerKey{name: name, stepType: stepType, op: op, rejected: err != nil}
	m.observer(k, m.controller).Observe(elapsed.Seconds())
}

// observerKey names one series of the metrics: a step's (name "") or a
// plugin's, in the summary or not.
type observerKey struct {
	name, stepType string
	op             handlers.Operation
	rejected       bool
	summary        bool
}

// observer returns the series of k in vec, created on first use and then
// remembered: a write goes through some 60 observations, and looking a
// series up by its labels each time costs more than timing the plugins.
func (m *Metrics) observer(k observerKey, vec interface {
	WithLabelValues(...string) prometheus.Observer
}) prometheus.Observer {
	if o, ok := m.observers.Load(k); ok {
		return o.(prometheus.Observer)
	}
	labels := []string{k.stepType, string(k.op), strconv.FormatBool(k.rejected)}
	if k.name != "" {
		labels = append([]string{k.name}, labels...)
	}
	o, _ := m.observers.LoadOrStore(k, vec.WithLabelValues(labels...))
	return o.(prometheus.Observer)
}
