package apf

import (
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf/queueset"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// StatsFunc returns what the store of a resource knows of it (see
// storage.Stats): found is false for a resource not served here (an
// aggregated API's), ok false while its store does not know.
type StatsFunc func(group, resource string) (stats storage.Stats, found, ok bool)

// kube's work estimator constants (as of 1.37, with its
// SizeBasedListCostEstimate, on by default).
const (
	// bytesPerSeat: a LIST takes a seat per this many bytes of objects
	// it loads.
	bytesPerSeat = 100_000
	// cacheMaxMemory bounds what a LIST from the watch cache is charged
	// for, since it streams.
	cacheMaxMemory = 1_000_000
	// maxObjectSize stands for the size of objects of unknown size.
	maxObjectSize = 1_500_000
	// unknownCount stands for the count of a store that does not know it.
	unknownCount = 1_000_000_000
	maxListSeats = 100
	// A write's watchers take a seat per watchesPerSeat, for
	// eventDuration each after it, in at most maxMutatingSeats seats.
	watchesPerSeat   = 10
	eventDuration    = 5 * time.Millisecond
	maxMutatingSeats = 10
)

// estimate is the work of a request at a level whose requests take at
// most maxSeats (0: the estimator's bounds): a LIST (or a WATCH
// sending its initial events) by the objects it loads, a write by the
// watchers it notifies, anything else one seat.
func estimate(info *request.Info, query url.Values, maxSeats int, stats StatsFunc) queueset.Work {
	switch info.Verb {
	case "list", "watch":
		return queueset.Work{InitialSeats: estimateList(info, query, maxSeats, stats)}
	case "create", "update", "patch", "delete", "deletecollection":
		return estimateWrite(info, maxSeats, stats)
	}
	return queueset.Work{InitialSeats: 1}
}

func estimateList(info *request.Info, query url.Values, maxSeats int, stats StatsFunc) int {
	if maxSeats == 0 || maxSeats > maxListSeats {
		maxSeats = maxListSeats
	}
	if info.Name != "" { // one object, read as a GET is
		return 1
	}
	rv := query.Get("resourceVersion")
	if info.Verb == "watch" && query.Get("sendInitialEvents") != "true" && rv != "" && rv != "0" {
		return 1 // a watch from a revision sends no initial state
	}
	st, found, ok := stats(info.APIGroup, info.Resource)
	if !found {
		return 1 // served elsewhere (aggregated): little work here
	}
	if !ok {
		st = storage.Stats{ObjectCount: unknownCount, ObjectBytes: unknownCount * maxObjectSize}
	}
	limit, _ := strconv.ParseInt(query.Get("limit"), 10, 64)
	// The watch cache serves what is not an exact revision, nor a page
	// after the first, nor a limited list at a given revision.
	fromCache := info.Verb == "watch" || !(query.Get("continue") != "" || query.Get("resourceVersionMatch") == "Exact" ||
		limit > 0 && rv != "" && rv != "0")
	avg := int64(maxObjectSize)
	if st.ObjectCount > 0 && st.ObjectBytes > 0 {
		avg = st.ObjectBytes / st.ObjectCount
	}
	objects := st.ObjectCount
	if limit > 0 && limit < objects {
		objects = limit
	}
	if !fromCache && (info.FieldSelector != "" || info.LabelSelector != "") {
		objects = max(objects, st.ObjectCount/2) // etcd reads past what it filters out
	}
	memory := float64(objects) * float64(avg)
	if fromCache {
		memory = math.Min(memory, cacheMaxMemory)
	}
	return min(max(int(math.Ceil(memory/bytesPerSeat)), 1), maxSeats)
}

// estimateWrite charges a write for the watchers its event goes to: a
// seat per watchesPerSeat of the resource's watchers, for eventDuration
// after the write (a wider charge than maxSeats is made longer
// instead).
func estimateWrite(info *request.Info, maxSeats int, stats StatsFunc) queueset.Work {
	w := queueset.Work{InitialSeats: 1}
	st, found, ok := stats(info.APIGroup, info.Resource)
	if !found || !ok || st.Watchers < watchesPerSeat {
		return w
	}
	if maxSeats == 0 || maxSeats > maxMutatingSeats {
		maxSeats = maxMutatingSeats
	}
	final := (st.Watchers + watchesPerSeat - 1) / watchesPerSeat
	latency := eventDuration
	if final > maxSeats {
		latency = latency * time.Duration(final) / time.Duration(maxSeats)
		final = maxSeats
	}
	w.FinalSeats, w.AdditionalLatency = final, latency
	return w
}
