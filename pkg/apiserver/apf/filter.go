package apf

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf/queueset"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// maxWaitLimit bounds any request's wait in a queue (kube's).
const maxWaitLimit = time.Minute

// WithPriorityAndFairness admits each request through c: classified by
// the flow schemas, served at once at an exempt level, else given seats
// at its level (by its estimated work, from stats) when its queue's turn
// comes, or refused with 429 and a Retry-After when its queue is full,
// its level rejects, or it waited a quarter of its deadline. Long-running
// requests other than watches are not limited; a watch holds its seats
// until its initial events are out. Every request limited or exempt
// names its flow schema and priority level by UID in kube's response
// headers.
func WithPriorityAndFairness(h http.Handler, c *Controller, stats StatsFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.InfoFrom(r.Context())
		if !ok || info.LongRunning() && info.Verb != "watch" {
			h.ServeHTTP(w, r)
			return
		}
		u, ok := request.UserFrom(r.Context())
		if !ok {
			u = &user.DefaultInfo{}
		}
		cl := c.classify(u, info)
		w.Header().Set(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID, string(cl.pl.UID))
		w.Header().Set(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, string(cl.fs.UID))
		labels := []string{cl.pl.Name, cl.fs.Name}
		if cl.exempt {
			serveExempt(c.m, w, r, h, cl.lv, labels)
			return
		}
		work := estimate(info, r.URL.Query(), cl.maxSeats, stats)
		waitCtx, cancel := c.waitContext(r.Context())
		inqueue := c.m.inqueueRequests.WithLabelValues(labels...)
		inqueue.Inc()
		start := time.Now()
		req, err := cl.qs.Start(waitCtx, queueset.FlowHash(cl.fs.Name, cl.flow), work, descr(cl.fs.Name, cl.flow, u, info))
		inqueue.Dec()
		cancel()
		if err != nil {
			c.m.waitDuration.WithLabelValues(append(labels, "false")...).Observe(time.Since(start).Seconds())
			c.reject(w, cl.pl.Name, labels, err)
			return
		}
		c.m.waitDuration.WithLabelValues(append(labels, "true")...).Observe(req.Wait().Seconds())
		serve(c.m, w, r, h, req, work, labels)
	})
}

// serve runs the request on its seats, given back when it ends, or,
// for a watch, once it is initialized.
func serve(m *metricSet, w http.ResponseWriter, r *http.Request, h http.Handler, req *queueset.Request, work queueset.Work, labels []string) {
	m.dispatchedRequests.WithLabelValues(labels...).Inc()
	executing, seats := m.executingRequests.WithLabelValues(labels...), m.executingSeats.WithLabelValues(labels...)
	executing.Inc()
	seats.Add(float64(work.MaxSeats()))
	var once sync.Once
	done := func() {
		once.Do(func() {
			executing.Dec()
			seats.Sub(float64(work.MaxSeats()))
			req.Finish()
		})
	}
	defer done()
	h.ServeHTTP(w, r.WithContext(request.WithWatchInitSignal(r.Context(), done)))
}

func serveExempt(m *metricSet, w http.ResponseWriter, r *http.Request, h http.Handler, lv *level, labels []string) {
	m.dispatchedRequests.WithLabelValues(labels...).Inc()
	executing, seats := m.executingRequests.WithLabelValues(labels...), m.executingSeats.WithLabelValues(labels...)
	executing.Inc()
	seats.Inc()
	n := lv.running.Add(1)
	for d := lv.demand.Load(); n > d && !lv.demand.CompareAndSwap(d, n); d = lv.demand.Load() {
	}
	var once sync.Once
	done := func() {
		once.Do(func() {
			executing.Dec()
			seats.Dec()
			lv.running.Add(-1)
		})
	}
	defer done()
	h.ServeHTTP(w, r.WithContext(request.WithWatchInitSignal(r.Context(), done)))
}

// waitContext bounds the wait in a queue: a quarter of what the request
// has until its deadline, else DefaultWaitLimit, and never over a
// minute (kube's rule).
func (c *Controller) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := c.cfg.DefaultWaitLimit
	if deadline, ok := ctx.Deadline(); ok {
		limit = time.Until(deadline) / 4
	}
	return context.WithTimeout(ctx, min(limit, maxWaitLimit))
}

// reject answers 429 as kube does: plain text, and a Retry-After that
// grows while the level keeps dropping requests.
func (c *Controller) reject(w http.ResponseWriter, level string, labels []string, err error) {
	reason := err.Error()
	if !errors.Is(err, queueset.ErrQueueFull) && !errors.Is(err, queueset.ErrConcurrencyLimit) &&
		!errors.Is(err, queueset.ErrTimeout) && !errors.Is(err, queueset.ErrCancelled) {
		reason = "unknown"
	}
	c.m.rejectedRequests.WithLabelValues(labels[0], labels[1], reason).Inc()
	retryAfter := c.dropped.dropped(level, time.Now())
	w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
}

// descr is how dump_requests shows a waiting request.
func descr(fs, flow string, u user.Info, info *request.Info) queueset.Descr {
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}.String()
	return queueset.Descr{FlowSchema: fs, Distinguisher: flow, Details: []string{
		u.GetName(), info.Verb, info.Path, info.Namespace, info.Name, gv, info.Resource, info.Subresource,
	}}
}
