package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// configMapsPrefix is where the replicas keep ConfigMaps in etcd
// (--etcd-prefix /registry); keys are <prefix><namespace>/<name>.
const configMapsPrefix = "/registry/configmaps/"

// change is one write of a key in etcd's history: a put or a delete at a
// revision.
type change struct {
	rev     int64
	deleted bool
}

func (c change) String() string {
	if c.deleted {
		return fmt.Sprintf("DELETED@%d", c.rev)
	}
	return fmt.Sprintf("PUT@%d", c.rev)
}

// history is etcd's history of every ConfigMap key, read with an etcd
// watch from the test's start: the truth every client's record is checked
// against. Compactions never pass what it has read (compactTarget).
type history struct {
	mu      sync.Mutex
	changes map[string][]change // by namespace/name
	last    int64               // revision of the last change read
	err     error
}

// recordHistory watches the ConfigMaps in etcd from revision from+1 until
// ctx ends.
func recordHistory(ctx context.Context, client *clientv3.Client, from int64) *history {
	h := &history{changes: map[string][]change{}, last: from}
	go func() {
		for resp := range client.Watch(ctx, configMapsPrefix, clientv3.WithPrefix(), clientv3.WithRev(from+1)) {
			if err := resp.Err(); err != nil {
				h.mu.Lock()
				h.err = fmt.Errorf("etcd's watch of the history: %w", err)
				h.mu.Unlock()
				return
			}
			h.mu.Lock()
			for _, ev := range resp.Events {
				key := strings.TrimPrefix(string(ev.Kv.Key), configMapsPrefix)
				h.changes[key] = append(h.changes[key], change{rev: ev.Kv.ModRevision, deleted: ev.Type == clientv3.EventTypeDelete})
				h.last = ev.Kv.ModRevision
			}
			h.mu.Unlock()
		}
	}()
	return h
}

// compactTarget is the highest revision that may be compacted without
// losing history this record has not read yet.
func (h *history) compactTarget() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// of returns the changes of key in (from, to].
func (h *history) of(key string, from, to int64) []change {
	h.mu.Lock()
	defer h.mu.Unlock()
	var cs []change
	for _, c := range h.changes[key] {
		if c.rev > from && c.rev <= to {
			cs = append(cs, c)
		}
	}
	return cs
}

// keys returns the keys (namespace/name) in namespace ("" for all) that
// ever changed.
func (h *history) keys(namespace string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ks []string
	for k := range h.changes {
		if namespace == "" || strings.HasPrefix(k, namespace+"/") {
			ks = append(ks, k)
		}
	}
	return ks
}

// stateAt returns the resourceVersion of every object of namespace that
// exists at rev, as far as the history knows (objects older than the
// history's start are not in it: the tests' namespaces are created after).
func (h *history) stateAt(namespace string, rev int64) map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	state := map[string]int64{}
	for k, cs := range h.changes {
		if namespace != "" && !strings.HasPrefix(k, namespace+"/") {
			continue
		}
		for _, c := range cs {
			if c.rev > rev {
				break
			}
			if c.deleted {
				delete(state, k)
			} else {
				state[k] = c.rev
			}
		}
	}
	return state
}

// find returns the change of key at rev and its index (-1 if there is
// none), with every change of key.
func (h *history) find(key string, rev int64) (change, int, []change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs := h.changes[key]
	for i, c := range cs {
		if c.rev == rev {
			return c, i, cs
		}
	}
	return change{}, -1, cs
}

func (h *history) error() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
