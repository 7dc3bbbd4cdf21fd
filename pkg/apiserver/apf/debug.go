package apf

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf/queueset"
)

// DebugPath is where kube serves the flow control dumps.
const DebugPath = "/debug/api_priority_and_fairness/"

// DebugHandlers are kube's dumps of the levels, queues and waiting
// requests, by path, in its format: comma-and-tab separated columns
// aligned by a tab writer, one row per level, queue or request.
func (c *Controller) DebugHandlers() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		DebugPath + "dump_priority_levels": c.dumpPriorityLevels,
		DebugPath + "dump_queues":          c.dumpQueues,
		DebugPath + "dump_requests":        c.dumpRequests,
	}
}

// levelDump is a level's state for the dumps.
type levelDump struct {
	name    string
	exempt  bool
	running int64
	digest  queueset.Digest
}

func (c *Controller) dumpLevels() []levelDump {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]levelDump, 0, len(c.levels))
	for _, name := range slices.Sorted(maps.Keys(c.levels)) {
		lv := c.levels[name]
		d := levelDump{name: name, exempt: lv.exempt}
		if lv.exempt {
			d.running = lv.running.Load()
		} else {
			d.digest = lv.qs.Dump()
		}
		out = append(out, d)
	}
	return out
}

func (c *Controller) dumpPriorityLevels(w http.ResponseWriter, _ *http.Request) {
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	writeRow(tw, "PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests", "ExecutingRequests")
	for _, l := range c.dumpLevels() {
		if l.exempt {
			writeRow(tw, l.name, "0", strconv.FormatBool(l.running == 0), "false", "0", strconv.FormatInt(l.running, 10))
			continue
		}
		active := 0
		for _, q := range l.digest.Queues {
			if len(q.Requests) > 0 {
				active++
			}
		}
		idle := l.digest.Waiting == 0 && l.digest.Executing == 0
		writeRow(tw, l.name, strconv.Itoa(active), strconv.FormatBool(idle), "false",
			strconv.Itoa(l.digest.Waiting), strconv.Itoa(l.digest.Executing))
	}
	tw.Flush()
}

func (c *Controller) dumpQueues(w http.ResponseWriter, _ *http.Request) {
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	writeRow(tw, "PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse", "NextDispatchR",
		"InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum")
	for _, l := range c.dumpLevels() {
		if l.exempt {
			writeRow(tw, l.name, "<none>", "<none>", "<none>", "<none>", "<none>", "<none>", "<none>", "<none>")
			continue
		}
		for i, q := range l.digest.Queues {
			writeRow(tw, l.name, strconv.Itoa(i), strconv.Itoa(len(q.Requests)), strconv.Itoa(q.Executing),
				strconv.Itoa(q.SeatsInUse), seatSeconds(q.NextDispatchR), strconv.Itoa(q.InitialSeatsSum),
				strconv.Itoa(q.MaxSeatsSum), seatSeconds(q.TotalWork))
		}
	}
	tw.Flush()
}

func (c *Controller) dumpRequests(w http.ResponseWriter, r *http.Request) {
	details := r.URL.Query().Get("includeRequestDetails") != ""
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	headers := []string{"PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue",
		"FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency"}
	if details {
		headers = append(headers, "UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource")
	}
	writeRow(tw, headers...)
	for _, l := range c.dumpLevels() {
		for iq, q := range l.digest.Queues {
			for ir, req := range q.Requests {
				row := []string{l.name, req.Descr.FlowSchema, strconv.Itoa(iq), strconv.Itoa(ir), req.Descr.Distinguisher,
					req.Arrived.UTC().Format(time.RFC3339Nano), strconv.Itoa(max(req.Work.InitialSeats, 1)),
					strconv.Itoa(req.Work.FinalSeats), req.Work.AdditionalLatency.String()}
				if details {
					row = append(row, req.Descr.Details...)
				}
				writeRow(tw, row...)
			}
		}
	}
	tw.Flush()
}

func writeRow(w io.Writer, columns ...string) {
	fmt.Fprint(w, strings.Join(columns, ",\t")+"\n")
}

// seatSeconds writes work as kube writes its SeatSeconds.
func seatSeconds(v float64) string { return fmt.Sprintf("%.8fss", v) }
