package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Percentile returns the p-th percentile (0 < p <= 100) of sorted samples by
// the nearest-rank method: the smallest sample such that at least p percent
// of the samples are less than or equal to it. It is exact (no
// interpolation, no sketch), so a p99 is a latency some request really had.
// An empty slice gives 0.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// Summary describes a set of latency samples.
type Summary struct {
	N                        int
	P50, P90, P99, Max, Mean time.Duration
}

// Summarize sorts a copy of samples and computes their summary.
func Summarize(samples []time.Duration) Summary {
	s := slices.Clone(samples)
	slices.Sort(s)
	sum := Summary{N: len(s)}
	if len(s) == 0 {
		return sum
	}
	var total time.Duration
	for _, d := range s {
		total += d
	}
	sum.P50 = Percentile(s, 50)
	sum.P90 = Percentile(s, 90)
	sum.P99 = Percentile(s, 99)
	sum.Max = s[len(s)-1]
	sum.Mean = total / time.Duration(len(s))
	return sum
}

// Fields returns the summary as result fields, in milliseconds, each name
// starting with prefix (which may be empty): p50_ms, p90_ms, p99_ms, max_ms,
// mean_ms and samples.
func (s Summary) Fields(prefix string) Fields {
	return Fields{
		prefix + "samples": s.N,
		prefix + "p50_ms":  ms(s.P50),
		prefix + "p90_ms":  ms(s.P90),
		prefix + "p99_ms":  ms(s.P99),
		prefix + "max_ms":  ms(s.Max),
		prefix + "mean_ms": ms(s.Mean),
	}
}

// ms converts a duration to milliseconds, rounded to the microsecond.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// perSec returns n per second over d, rounded to 0.1 (0 when d is 0).
func perSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return math.Round(float64(n)/d.Seconds()*10) / 10
}

// Fields are named result values; names carry their unit (_ms, _bytes,
// _per_sec) so that a line read on its own says what it measures.
type Fields map[string]any

// add copies every field of f into r.
func (r Fields) add(f Fields) {
	for k, v := range f {
		r[k] = v
	}
}

// Result is the one line a scenario prints.
type Result struct {
	Scenario string
	// Server is the URL the scenario measured (the apiserver, or etcd).
	Server string
	Time   time.Time
	Params Fields
	Fields Fields
}

// header names are written first, in this order; a field may not reuse one.
var header = []string{"scenario", "server", "time", "params"}

// MarshalJSON writes one flat JSON object: scenario, server, time (RFC 3339,
// UTC) and params first, then the fields sorted by name, so that lines of
// the same scenario compare by eye.
func (r Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	params := r.Params
	if params == nil {
		params = Fields{}
	}
	head := []any{r.Scenario, r.Server, r.Time.UTC().Format(time.RFC3339Nano), params}
	b.WriteByte('{')
	for i, k := range header {
		if err := writeMember(&b, i > 0, k, head[i]); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(r.Fields))
	for k := range r.Fields {
		if slices.Contains(header, k) {
			return nil, fmt.Errorf("result field %q clashes with the header", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := writeMember(&b, true, k, r.Fields[k]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeMember(b *bytes.Buffer, comma bool, k string, v any) error {
	if comma {
		b.WriteByte(',')
	}
	kb, _ := json.Marshal(k)
	vb, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("result field %q: %w", k, err)
	}
	b.Write(kb)
	b.WriteByte(':')
	b.Write(vb)
	return nil
}

// Line returns the result as one JSON line ending in a newline.
func (r Result) Line() ([]byte, error) {
	b, err := r.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// errorSamples keeps the first few distinct error messages of a run, so a
// result says why requests failed without printing thousands of lines.
type errorSamples struct {
	count   int
	samples []string
}

const maxErrorSamples = 5

func (e *errorSamples) add(err error) {
	e.count++
	msg := err.Error()
	if len(e.samples) < maxErrorSamples && !slices.Contains(e.samples, msg) {
		e.samples = append(e.samples, msg)
	}
}

func (e *errorSamples) merge(o *errorSamples) {
	e.count += o.count
	for _, s := range o.samples {
		if len(e.samples) < maxErrorSamples && !slices.Contains(e.samples, s) {
			e.samples = append(e.samples, s)
		}
	}
}

// fields reports errors and, when there were any, error_samples.
func (e *errorSamples) fields() Fields {
	f := Fields{"errors": e.count}
	if len(e.samples) > 0 {
		f["error_samples"] = e.samples
	}
	return f
}
