package cacher

import (
	"sort"
	"sync"

	"github.com/google/btree"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// entry is one cached object: its stored encoding, and what filtering
// needs. Entries are immutable once built.
type entry struct {
	obj    *storage.Object
	labels pairs
	fields pairs
}

func (e *entry) key() string { return e.obj.Key }

func lessEntry(a, b *entry) bool { return a.obj.Key < b.obj.Key }

// store holds the current objects, ordered by key, plus an index per
// trigger field (value -> key -> entry). It is not safe for concurrent
// use: the watchCache guards it. Snapshots (Clone) may be read without
// the lock while the store changes.
type store struct {
	tree    *btree.BTreeG[*entry]
	indexes map[string]map[string]map[string]*entry
	// bytes is the encoded size of the objects held.
	bytes int64
	// cloneMu serializes snapshots: btree's Clone replaces the tree's
	// copy-on-write context, a write, while its callers hold only the
	// watch cache's read lock (two LISTs at once raced on it).
	cloneMu sync.Mutex
}

const btreeDegree = 32

func newStore(indexFields []string) *store {
	s := &store{tree: btree.NewG(btreeDegree, lessEntry), indexes: map[string]map[string]map[string]*entry{}}
	for _, f := range indexFields {
		s.indexes[f] = map[string]map[string]*entry{}
	}
	return s
}

func probe(key string) *entry { return &entry{obj: &storage.Object{Key: key}} }

func (s *store) get(key string) (*entry, bool) { return s.tree.Get(probe(key)) }

// put inserts or replaces e, and returns what it replaced.
func (s *store) put(e *entry) (*entry, bool) {
	old, replaced := s.tree.ReplaceOrInsert(e)
	s.bytes += int64(e.obj.Size())
	if replaced {
		s.bytes -= int64(old.obj.Size())
		s.unindex(old)
	}
	s.index(e)
	return old, replaced
}

// remove deletes the object at key, and returns it.
func (s *store) remove(key string) (*entry, bool) {
	old, ok := s.tree.Delete(probe(key))
	if ok {
		s.bytes -= int64(old.obj.Size())
		s.unindex(old)
	}
	return old, ok
}

func (s *store) len() int { return s.tree.Len() }

// forget gives back the room the objects' remembered encodings take in
// their budget (storage.Object.Forget), once the store is dropped.
func (s *store) forget() {
	s.tree.Ascend(func(e *entry) bool {
		e.obj.Forget()
		return true
	})
}

func (s *store) index(e *entry) {
	for field, values := range s.indexes {
		v := e.fields.Get(field)
		byKey := values[v]
		if byKey == nil {
			byKey = map[string]*entry{}
			values[v] = byKey
		}
		byKey[e.key()] = e
	}
}

func (s *store) unindex(e *entry) {
	for field, values := range s.indexes {
		v := e.fields.Get(field)
		if byKey := values[v]; byKey != nil {
			delete(byKey, e.key())
			if len(byKey) == 0 {
				delete(values, v)
			}
		}
	}
}

// snapshot returns a read-only copy of the tree in O(1) (copy on write).
// Callers hold the watch cache's lock, for reading at least.
func (s *store) snapshot() *btree.BTreeG[*entry] {
	s.cloneMu.Lock()
	defer s.cloneMu.Unlock()
	return s.tree.Clone()
}

// indexed returns the entries under prefix whose indexed field has value,
// sorted by key, and whether field is indexed at all.
func (s *store) indexed(field, value, prefix string) ([]*entry, bool) {
	values, ok := s.indexes[field]
	if !ok {
		return nil, false
	}
	var out []*entry
	for key, e := range values[value] {
		if len(key) >= len(prefix) && key[:len(prefix)] == prefix {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out, true
}

// ascendPrefix calls fn on each entry of tree under prefix, in key order,
// until fn returns false.
func ascendPrefix(tree *btree.BTreeG[*entry], prefix string, fn func(*entry) bool) {
	if prefix == "" {
		tree.Ascend(fn)
		return
	}
	tree.AscendRange(probe(prefix), probe(prefixEnd(prefix)), fn)
}

// prefixEnd is the smallest key greater than every key with prefix.
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\xff\xff\xff\xff" // no upper bound
}
