package chaos

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// convergeTimeout bounds the wait for the history, the watchers and the
// informers to reach the final state once the writers stopped.
const convergeTimeout = time.Minute

// maxReports caps the problems reported per check.
const maxReports = 20

// finalState reads the ConfigMaps of the test's namespaces from etcd once
// the writers stopped, waits until the history has read up to them, and
// checks that a consistent LIST through every replica returns them.
func (s *suite) finalState(t *testing.T) map[string]int64 {
	ctx, cancel := context.WithTimeout(t.Context(), convergeTimeout)
	defer cancel()
	resp, err := s.etcd.Get(ctx, configMapsPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatalf("reading the final state from etcd: %v", err)
	}
	final := map[string]int64{}
	for _, kv := range resp.Kvs {
		key := strings.TrimPrefix(string(kv.Key), configMapsPrefix)
		if inNamespaces(key, s.namespaces) {
			final[key] = kv.ModRevision
		}
	}
	for ctx.Err() == nil && !maps.Equal(onlyIn(s.history.stateAt("", math.MaxInt64), s.namespaces), final) {
		time.Sleep(100 * time.Millisecond)
	}
	if err := s.history.error(); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("etcd's history did not reach etcd's final state in %v", convergeTimeout)
	}
	for i, a := range s.cluster.addresses() {
		cs := newFailover([]string{a}, 0).clientset(writeTimeout)
		got := map[string]int64{}
		for _, ns := range s.namespaces {
			list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("replica %d: listing %s: %v", i, ns, err)
			}
			for _, cm := range list.Items {
				got[ns+"/"+cm.Name] = parseRV(cm.ResourceVersion)
			}
		}
		if !maps.Equal(got, final) {
			t.Errorf("replica %d: a consistent LIST differs from etcd: %s", i, diffStates(got, final))
		}
	}
	return final
}

// waitCaughtUp waits until every watcher has seen up to the last change
// and every informer holds the final state of its namespace.
func (s *suite) waitCaughtUp(t *testing.T, final map[string]int64, watchers []*watcher, informers []*informer) {
	last := s.history.compactTarget()
	deadline := time.Now().Add(convergeTimeout)
	for {
		var behind []string
		for _, w := range watchers {
			if !w.caughtUp(last) {
				behind = append(behind, fmt.Sprintf("watcher %d", w.id))
			}
		}
		for _, inf := range informers {
			if !inf.converged(onlyIn(final, []string{inf.namespace})) {
				behind = append(behind, "the informer of "+inf.namespace)
			}
		}
		if len(behind) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("not caught up with resourceVersion %d in %v: %s", last, convergeTimeout, strings.Join(behind, ", "))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkWrites checks every acknowledged write against etcd's history: a
// create or update is there at its resourceVersion, right after the
// version it was conditional on; a delete right after its version. A
// change no one acknowledged needs a write without a clear answer.
func checkWrites(t *testing.T, h *history, writers []*writer) {
	var problems []string
	for _, w := range writers {
		problems = append(problems, w.backwards...)
		acked := map[string]int{}
		for _, a := range w.acks {
			acked[a.key]++
			if p := checkAck(h, a); p != "" {
				problems = append(problems, p)
			}
		}
		for _, name := range w.names {
			key := w.namespace + "/" + name
			if n := len(h.of(key, 0, math.MaxInt64)); n > acked[key]+w.ambiguous[key] {
				problems = append(problems, fmt.Sprintf("%s: %d changes in etcd, %d acknowledged and %d without an answer", key, n, acked[key], w.ambiguous[key]))
			}
		}
	}
	report(t, "acknowledged writes", problems)
}

func checkAck(h *history, a ack) string {
	if a.verb == "delete" {
		_, i, cs := h.find(a.key, a.prev)
		if i < 0 || i+1 >= len(cs) || !cs[i+1].deleted {
			return fmt.Sprintf("acknowledged delete of %s at resourceVersion %d is not in etcd's history: %v", a.key, a.prev, cs)
		}
		return ""
	}
	c, i, cs := h.find(a.key, a.rev)
	switch {
	case i < 0 || c.deleted:
		return fmt.Sprintf("acknowledged %s of %s at resourceVersion %d is not in etcd's history (lost): %v", a.verb, a.key, a.rev, cs)
	case a.verb == "update" && (i == 0 || cs[i-1] != change{rev: a.prev}):
		return fmt.Sprintf("acknowledged update of %s at %d was conditional on %d, which is not the change before it: %v", a.key, a.rev, a.prev, cs)
	case a.verb == "create" && i > 0 && !cs[i-1].deleted:
		return fmt.Sprintf("acknowledged create of %s at %d over an existing object: %v", a.key, a.rev, cs)
	}
	return ""
}

// checkWatchers checks each watcher's epochs: the LIST is etcd's state at
// its revision, and the events of every key up to the last revision seen
// are etcd's changes of that key: none lost, duplicated or reordered
// across the watcher's reconnections.
func checkWatchers(t *testing.T, h *history, watchers []*watcher, namespaces []string) {
	var problems []string
	for _, w := range watchers {
		for _, p := range w.problems {
			problems = append(problems, fmt.Sprintf("watcher %d: %s", w.id, p))
		}
		for _, e := range w.epochs {
			want := onlyIn(h.stateAt(w.namespace, e.start), namespaces)
			if got := onlyIn(e.listed, namespaces); !maps.Equal(got, want) {
				problems = append(problems, fmt.Sprintf("watcher %d: LIST at %d differs from etcd: %s", w.id, e.start, diffStates(got, want)))
			}
			keys := h.keys(w.namespace)
			for k := range e.events {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
			for _, k := range keys {
				want, got := h.of(k, e.start, e.last), e.events[k]
				if !slices.Equal(got, want) {
					problems = append(problems, fmt.Sprintf("watcher %d (%q): %s in (%d, %d]: %s; %s", w.id, w.namespace, k, e.start, e.last, diffEvents(got, want), streamsAround(e, got, want)))
				}
			}
		}
	}
	report(t, "watch events", problems)
}

// checkInformers checks that no informer saw a resourceVersion go back
// (they converged in waitCaughtUp).
func checkInformers(t *testing.T, informers []*informer, final map[string]int64) {
	var problems []string
	for _, inf := range informers {
		inf.mu.Lock()
		problems = append(problems, inf.problems...)
		inf.mu.Unlock()
		if want := onlyIn(final, []string{inf.namespace}); !inf.converged(want) {
			problems = append(problems, fmt.Sprintf("the informer of %s: %s", inf.namespace, diffStates(inf.state(), want)))
		}
	}
	report(t, "informers", problems)
}

// diffEvents names what is wrong with a watcher's events of one key, and
// shows where they first differ from etcd's.
func diffEvents(got, want []change) string {
	seen := map[change]int{}
	for _, c := range got {
		seen[c]++
	}
	var lost, dup []string
	for _, c := range want {
		if seen[c] == 0 {
			lost = append(lost, c.String())
		}
	}
	for c, n := range seen {
		if n > 1 {
			dup = append(dup, c.String())
		}
	}
	kind := "reordered or unknown"
	switch {
	case len(lost) > 0:
		kind = "lost " + strings.Join(lost, " ")
	case len(dup) > 0:
		kind = "duplicated " + strings.Join(dup, " ")
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	from := max(i-2, 0)
	return fmt.Sprintf("%s (from change %d: saw %v, etcd has %v)", kind, from, window(got, from), window(want, from))
}

// streamsAround names the watch streams around the first difference.
func streamsAround(e *epoch, got, want []change) string {
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	if i >= len(want) {
		return "no stream"
	}
	rev := want[i].rev
	var out []string
	for j, st := range e.streams {
		next := int64(math.MaxInt64)
		if j+1 < len(e.streams) {
			next = e.streams[j+1].from
		}
		if st.from < rev+50 && next > rev-50 {
			out = append(out, fmt.Sprintf("stream from %d to %s at %s", st.from, st.replica, st.at.Format("15:04:05.000")))
		}
	}
	return strings.Join(out, ", ")
}

func window(cs []change, from int) []change {
	return cs[min(from, len(cs)):min(from+5, len(cs))]
}

// diffStates lists the keys whose resourceVersions differ.
func diffStates(got, want map[string]int64) string {
	var d []string
	for k, rv := range want {
		if got[k] != rv {
			d = append(d, fmt.Sprintf("%s: %d, want %d", k, got[k], rv))
		}
	}
	for k, rv := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s: %d, want none", k, rv))
		}
	}
	slices.Sort(d)
	return strings.Join(d, "; ")
}

// onlyIn keeps the keys of state in namespaces.
func onlyIn(state map[string]int64, namespaces []string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range state {
		if inNamespaces(k, namespaces) {
			out[k] = v
		}
	}
	return out
}

func inNamespaces(key string, namespaces []string) bool {
	ns, _, _ := strings.Cut(key, "/")
	return slices.Contains(namespaces, ns)
}

func report(t *testing.T, what string, problems []string) {
	t.Helper()
	if len(problems) == 0 {
		return
	}
	shown := problems[:min(len(problems), maxReports)]
	t.Errorf("%s: %d problems:\n%s", what, len(problems), strings.Join(shown, "\n"))
}
