package apf

import (
	"maps"
	"math"
	"slices"
	"sync/atomic"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf/queueset"
)

// kube's constants of the limits.
const (
	// maxSeatsFraction of a level's nominal limit is the most seats one
	// request may take there (and at most its nominal limit over its
	// hand size).
	maxSeatsFraction = 0.15
	// demandSmoothing weighs the past in the smoothed seat demand that a
	// level's share of the borrowing is based on.
	demandSmoothing = 0.977
)

// level is the state of one priority level.
type level struct {
	pl     *flowcontrolv1.PriorityLevelConfiguration
	exempt bool
	// qs queues and limits a limited level; nil when exempt.
	qs *queueset.QueueSet

	// Under Controller.mu: the nominal limit, the least and most the
	// level may have when lending and borrowing, the current one.
	nominal, minCL, maxCL, current int
	// maxSeats bounds one request's width (0: the estimator's bound).
	maxSeats int
	// smoothed is the smoothed demand for seats.
	smoothed float64

	// running and demand (the most that ran at once this period) of an
	// exempt level, which has no queue set to count them.
	running, demand atomic.Int64
}

// spec returns the level's nominal concurrency shares, lendable percent
// and borrowing limit percent (nil: no limit), with kube's defaults.
func spec(pl *flowcontrolv1.PriorityLevelConfiguration) (shares, lendable int32, borrowing *int32) {
	if pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt || pl.Spec.Limited == nil {
		if e := pl.Spec.Exempt; e != nil {
			shares, lendable = deref(e.NominalConcurrencyShares, 0), deref(e.LendablePercent, 0)
		}
		zero := int32(0)
		return shares, lendable, &zero
	}
	l := pl.Spec.Limited
	return deref(l.NominalConcurrencyShares, 30), deref(l.LendablePercent, 0), l.BorrowingLimitPercent
}

func deref(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// configureLevelsLocked computes each level's limits (kube's: the
// server's seats shared by nominal concurrency shares, rounded up) and
// builds or reconfigures its queue set.
func (c *Controller) configureLevelsLocked(pls []*flowcontrolv1.PriorityLevelConfiguration) map[string]*level {
	server := c.cfg.ServerConcurrencyLimit
	var shareSum float64
	for _, pl := range pls {
		shares, _, _ := spec(pl)
		shareSum += float64(shares)
	}
	levels := make(map[string]*level, len(pls))
	c.nominalSum = 0
	for _, pl := range pls {
		exempt := pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt
		lv := c.levels[pl.Name]
		fresh := lv == nil || lv.exempt != exempt
		if fresh {
			lv = &level{}
		}
		lv.pl, lv.exempt = pl, exempt
		shares, lendablePct, borrowingPct := spec(pl)
		nominal := 0
		if shareSum > 0 {
			nominal = int(math.Ceil(float64(server) * float64(shares) / shareSum))
		}
		lendable, borrowing := int(math.Round(float64(nominal)*float64(lendablePct)/100)), server
		if borrowingPct != nil {
			borrowing = int(math.Round(float64(nominal) * float64(*borrowingPct) / 100))
		}
		lv.nominal, lv.minCL, lv.maxCL = nominal, nominal-lendable, nominal+borrowing
		c.nominalSum += nominal
		c.m.nominalLimitSeats.WithLabelValues(pl.Name).Set(float64(nominal))
		levels[pl.Name] = lv
		if exempt {
			lv.qs, lv.current = nil, lv.minCL
			continue
		}
		if fresh {
			lv.current = nominal - lendable/2 // as kube starts a level
		}
		lv.current = min(max(lv.current, lv.minCL), lv.maxCL)
		qcfg := queueSetOf(pl)
		lv.maxSeats = 0
		if qcfg.Queues > 0 {
			lv.maxSeats = max(1, min(int(math.Ceil(float64(nominal)*maxSeatsFraction)), nominal/max(qcfg.HandSize, 1)))
		}
		if lv.qs == nil {
			lv.qs = queueset.New(qcfg, lv.current)
		} else {
			lv.qs.Configure(qcfg, lv.current)
		}
		c.m.currentLimitSeats.WithLabelValues(pl.Name).Set(float64(lv.current))
	}
	return levels
}

// forget drops a removed level's gauges.
func (lv *level) forget(m *metricSet) {
	m.nominalLimitSeats.DeleteLabelValues(lv.pl.Name)
	m.currentLimitSeats.DeleteLabelValues(lv.pl.Name)
}

// allocItem is one limited level in the sharing of the seats.
type allocItem struct {
	lv                   *level
	lower, upper, target float64
}

// rebalance lends the seats levels do not use to those that want more,
// as kube's controller does every 10 s: each level's demand over the
// period (here its high watermark: kube integrates the demand and takes
// its mean plus one deviation) is smoothed; each limited level then gets
// its smoothed demand scaled by one fair fraction for all, within what
// it may lend and borrow, so that the limits add up to the server's.
func (c *Controller) rebalance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	remaining := c.nominalSum
	var items []allocItem
	minSum, lowerSum := 0, 0
	for _, name := range slices.Sorted(maps.Keys(c.levels)) {
		lv := c.levels[name]
		if lv.exempt {
			hwm := int(lv.demand.Swap(lv.running.Load()))
			lv.current = max(lv.minCL, hwm)
			remaining -= lv.current
			continue
		}
		hwm := lv.qs.TakeDemand()
		lv.smoothed = math.Max(float64(hwm), demandSmoothing*lv.smoothed+(1-demandSmoothing)*float64(hwm))
		lower := max(lv.minCL, min(lv.nominal, hwm))
		items = append(items, allocItem{lv: lv, lower: float64(lower), upper: float64(lv.maxCL), target: math.Max(float64(lower), lv.smoothed)})
		minSum += lv.minCL
		lowerSum += lower
	}
	var allocs []float64
	if remaining > lowerSum {
		allocs = allocate(float64(c.nominalSum), items)
	}
	for i, it := range items {
		lv := it.lv
		switch {
		case remaining <= minSum:
			lv.current = lv.minCL
		case remaining <= lowerSum:
			frac := float64(remaining-minSum) / float64(lowerSum-minSum)
			lv.current = lv.minCL + int(math.Round((it.lower-float64(lv.minCL))*frac))
		default:
			lv.current = int(math.Round(allocs[i]))
		}
		lv.qs.SetLimit(lv.current)
		c.m.currentLimitSeats.WithLabelValues(lv.pl.Name).Set(float64(lv.current))
	}
}

// allocate finds the fair fraction f for which the items' targets times
// f, each kept within its bounds, add up to total, and returns those
// allocations.
func allocate(total float64, items []allocItem) []float64 {
	at := func(f float64) (sum float64, out []float64) {
		out = make([]float64, len(items))
		for i, it := range items {
			out[i] = math.Min(math.Max(f*it.target, it.lower), it.upper)
			sum += out[i]
		}
		return sum, out
	}
	lo, hi := 0.0, 1.0
	for s, _ := at(hi); s < total && hi < 1e9; s, _ = at(hi) {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if s, _ := at(mid); s < total {
			lo = mid
		} else {
			hi = mid
		}
	}
	_, out := at(hi)
	return out
}
