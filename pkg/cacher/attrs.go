package cacher

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// pairs are the labels or fields of an object as a sorted list of
// key/value pairs: much smaller than a map, and fast to search for the
// handful of entries objects have. They implement labels.Labels and
// fields.Fields.
type pairs []string

// newPairs builds pairs from m. Values equal to a substring of key (an
// object's name and namespace) share key's memory instead of holding a
// copy.
func newPairs(m map[string]string, key string) pairs {
	if len(m) == 0 {
		return nil
	}
	p := make(pairs, 0, 2*len(m))
	for k := range m {
		p = append(p, k, "")
	}
	sort.Sort(byKey(p))
	for i := 0; i < len(p); i += 2 {
		p[i+1] = intern(m[p[i]], key)
	}
	return p
}

func intern(v, key string) string {
	if v == "" {
		return ""
	}
	if i := strings.Index(key, v); i >= 0 {
		return key[i : i+len(v)]
	}
	return v
}

// Has implements labels.Labels and fields.Fields. The methods have
// pointer receivers: a *pairs fits in an interface without an allocation,
// which matters when every cached object is matched against a selector.
func (p *pairs) Has(k string) bool {
	_, ok := p.lookup(k)
	return ok
}

// Get implements labels.Labels and fields.Fields.
func (p *pairs) Get(k string) string {
	v, _ := p.lookup(k)
	return v
}

func (p *pairs) lookup(k string) (string, bool) {
	s := *p
	n := len(s) / 2
	// A few pairs at most: a linear scan beats a binary search's closure.
	for i := 0; i < n; i++ {
		if s[2*i] == k {
			return s[2*i+1], true
		}
	}
	return "", false
}

// Lookup implements labels.Labels.
func (p *pairs) Lookup(k string) (string, bool) { return p.lookup(k) }

var (
	_ labels.Labels = (*pairs)(nil)
	_ fields.Fields = (*pairs)(nil)
)

type byKey pairs

func (b byKey) Len() int           { return len(b) / 2 }
func (b byKey) Less(i, j int) bool { return b[2*i] < b[2*j] }
func (b byKey) Swap(i, j int) {
	b[2*i], b[2*j] = b[2*j], b[2*i]
	b[2*i+1], b[2*j+1] = b[2*j+1], b[2*i+1]
}
