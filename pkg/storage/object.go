package storage

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is one stored object as lists and watches hand it upwards: its key,
// the revision it was written at, and its JSON encoding as stored in etcd,
// or decoded from the media type stored there (storage.Codec); it never
// contains metadata.resourceVersion.
//
// The resourceVersion is spliced into the JSON when the object is written
// out, at the place kube's encoder puts it (right after metadata.uid), so the
// stored bytes serve every reader without decoding or re-encoding. An Object
// is immutable after NewObject and may be shared by any number of readers.
type Object struct {
	Key             string
	ResourceVersion int64

	data []byte
	// rvAt is where `"resourceVersion":"N"` goes in data; rvMode says which
	// separators surround it.
	rvAt   int32
	rvMode uint8
	// typeMetaEnd is where the fields after kind and apiVersion start (0
	// when data does not begin with them): list items are written without
	// their TypeMeta, as kube writes them.
	typeMetaEnd int32

	// memo, when set, remembers other encodings of this object (protobuf,
	// ...) and its conversions to other versions, so that the watchers
	// sharing one event convert and encode it once. Only Shareable copies
	// carry one (see Shareable), and the copies a cache's store holds,
	// within a budget (see Remembering).
	memo *encodingMemo
}

const (
	rvAfterUID  uint8 = iota // `,"resourceVersion":"N"` after the uid value
	rvFirst                  // `"resourceVersion":"N",` as the first key
	rvOnlyField              // `"resourceVersion":"N"` in an empty metadata
)

// NewObject wraps data (JSON, without resourceVersion) stored at key with
// revision rev. data must not be modified afterwards. It fails when data has
// no top-level metadata object.
func NewObject(key string, rev int64, data []byte) (*Object, error) {
	at, mode, err := locateResourceVersion(data)
	if err != nil {
		return nil, NewInternalError(key, err)
	}
	return &Object{Key: key, ResourceVersion: rev, data: data, rvAt: int32(at), rvMode: mode,
		typeMetaEnd: int32(locateTypeMetaEnd(data))}, nil
}

// Data returns the stored encoding (without resourceVersion). Callers must
// not modify it.
func (o *Object) Data() []byte { return o.data }

// Size is the length of the stored encoding.
func (o *Object) Size() int { return len(o.data) }

// WithResourceVersion returns the same object carrying another revision, as
// a DELETED event does (the last state, at the deletion's revision).
func (o *Object) WithResourceVersion(rev int64) *Object {
	c := *o
	c.ResourceVersion = rev
	c.memo = nil
	return &c
}

// Shareable returns a copy of o that remembers the encodings computed
// through Encoded and the conversions computed through Converted, for an
// event that many watchers receive. Objects held long term (a cache's
// store) remember within a budget instead (Remembering).
func (o *Object) Shareable() *Object {
	c := *o
	c.memo = &encodingMemo{}
	return &c
}

// AppendJSON appends o's JSON encoding, with its resourceVersion, to
// dst. Without typeMeta, kind and apiVersion are left out (list items, as
// kube writes them). Revision 0 (an object no store holds: a component's
// status) writes no resourceVersion, as Decode sets none.
func (o *Object) AppendJSON(dst []byte, typeMeta bool) []byte {
	head := o.data[:o.rvAt]
	if !typeMeta && o.typeMetaEnd > 0 {
		dst = append(dst, o.data[0]) // the opening brace
		head = o.data[o.typeMetaEnd:o.rvAt]
	}
	dst = append(dst, head...)
	dst = o.appendRV(dst)
	return append(dst, o.data[o.rvAt:]...)
}

// JSONSize is the length of the output of AppendJSON with typeMeta.
func (o *Object) JSONSize() int {
	return len(o.data) + len(o.appendRV(make([]byte, 0, 48)))
}

func (o *Object) appendRV(dst []byte) []byte {
	if o.ResourceVersion == 0 {
		return dst
	}
	if o.rvMode == rvAfterUID {
		dst = append(dst, ',')
	}
	dst = append(dst, `"resourceVersion":"`...)
	dst = strconv.AppendInt(dst, o.ResourceVersion, 10)
	dst = append(dst, '"')
	if o.rvMode == rvFirst {
		dst = append(dst, ',')
	}
	return dst
}

// Decode decodes o into into (a pointer to the resource's Go type) and sets
// its resourceVersion.
func (o *Object) Decode(into runtime.Object) error {
	if err := json.Unmarshal(o.data, into); err != nil {
		return NewInternalError(o.Key, fmt.Errorf("decoding stored object: %w", err))
	}
	return SetResourceVersion(into, o.ResourceVersion)
}

// Encoded returns the encoding of o named format, computing it with encode
// the first time. On a Shareable object the result is remembered, so the
// watchers that share one event encode it once; otherwise encode runs on
// every call.
func (o *Object) Encoded(format string, encode func() ([]byte, error)) ([]byte, error) {
	if o.memo == nil {
		return encode()
	}
	return o.memo.get(format, encode)
}

// Converted returns o at another version (its JSON as that version's
// kind), computing it with convert the first time. On a Shareable object
// the result is remembered per version and is Shareable itself: the
// watchers of one event at that version convert it once, and share its
// encodings (Encoded) too. Otherwise (Remembering objects too) convert
// runs on every call.
func (o *Object) Converted(version string, convert func() (*Object, error)) (*Object, error) {
	if o.memo == nil || o.memo.budget != nil {
		return convert()
	}
	return o.memo.converted(version, convert)
}

type encodingMemo struct {
	mu sync.Mutex
	// budget, when set, bounds what the memo keeps (Remembering); once
	// forgotten (Forget) it keeps nothing more.
	budget    *EncodingBudget
	forgotten bool
	// A handful of formats and versions at most: slices beat maps.
	entries     []memoEntry
	conversions []conversionEntry
}

type memoEntry struct {
	format string
	data   []byte
	err    error
}

type conversionEntry struct {
	version string
	obj     *Object
	err     error
}

func (m *encodingMemo) get(format string, encode func() ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.format == format {
			return e.data, e.err
		}
	}
	data, err := encode()
	if m.budget != nil && (err != nil || m.forgotten || !m.budget.reserve(len(data))) {
		return data, err
	}
	m.entries = append(m.entries, memoEntry{format: format, data: data, err: err})
	return data, err
}

func (m *encodingMemo) converted(version string, convert func() (*Object, error)) (*Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.conversions {
		if e.version == version {
			return e.obj, e.err
		}
	}
	obj, err := convert()
	if err == nil {
		obj = obj.Shareable()
	}
	m.conversions = append(m.conversions, conversionEntry{version: version, obj: obj, err: err})
	return obj, err
}

// SetResourceVersion sets obj's metadata.resourceVersion to rev (empty for 0).
func SetResourceVersion(obj runtime.Object, rev int64) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return NewInternalError("", err)
	}
	if rev == 0 {
		accessor.SetResourceVersion("")
	} else {
		accessor.SetResourceVersion(strconv.FormatInt(rev, 10))
	}
	return nil
}

// ObjectResourceVersion returns obj's metadata.resourceVersion as a number
// (0 when empty), or an InvalidObj error when it is not a revision.
func ObjectResourceVersion(obj runtime.Object) (int64, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return 0, NewInternalError("", err)
	}
	return ParseResourceVersion(accessor.GetResourceVersion())
}

// Encode returns the JSON that is stored for obj. It clears obj's
// resourceVersion first: the revision lives in etcd, not in the value.
func Encode(obj runtime.Object) ([]byte, error) {
	if err := SetResourceVersion(obj, 0); err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, NewInternalError("", fmt.Errorf("encoding object: %w", err))
	}
	return data, nil
}

// locateTypeMetaEnd returns the offset just past `"kind":...,"apiVersion":...,`
// when data starts with those two keys (our encoder always writes them
// first), or 0.
func locateTypeMetaEnd(data []byte) int {
	p := skipSpace(data, 0)
	if p >= len(data) || data[p] != '{' {
		return 0
	}
	p = skipSpace(data, p+1)
	for _, want := range []string{"kind", "apiVersion"} {
		key, next, ok := readString(data, p)
		if !ok || key != want {
			return 0
		}
		p = skipSpace(data, next)
		if p >= len(data) || data[p] != ':' {
			return 0
		}
		end, ok := skipValue(data, skipSpace(data, p+1))
		if !ok {
			return 0
		}
		p = skipSpace(data, end)
		if p >= len(data) || data[p] != ',' {
			return 0
		}
		p = skipSpace(data, p+1)
	}
	return p
}

// locateResourceVersion finds where resourceVersion belongs in data: right
// after metadata.uid, the place kube's encoder gives it (ObjectMeta's field
// order is name, generateName, namespace, selfLink, uid, resourceVersion, ...),
// or first in metadata when there is no uid.
func locateResourceVersion(data []byte) (int, uint8, error) {
	start, ok := topLevelMetadata(data)
	if !ok {
		return 0, 0, fmt.Errorf("stored object has no metadata")
	}
	p := skipSpace(data, start)
	if p < len(data) && data[p] == '}' {
		return start, rvOnlyField, nil
	}
	for p < len(data) {
		key, next, ok := readString(data, p)
		if !ok {
			break
		}
		p = skipSpace(data, next)
		if p >= len(data) || data[p] != ':' {
			break
		}
		end, ok := skipValue(data, skipSpace(data, p+1))
		if !ok {
			break
		}
		if key == "uid" {
			return end, rvAfterUID, nil
		}
		p = skipSpace(data, end)
		if p >= len(data) || data[p] != ',' {
			break // end of metadata without a uid
		}
		p = skipSpace(data, p+1)
	}
	return start, rvFirst, nil
}

// topLevelMetadata returns the offset just past the `{` of the top-level
// metadata object. Typed kinds encode it third, after kind and
// apiVersion; unstructured objects (custom resources) encode their keys
// sorted, so fields before it ("data", ...) may hold objects with
// metadata of their own (embedded resources): the top-level keys are
// walked, never searched.
func topLevelMetadata(data []byte) (int, bool) {
	p := skipSpace(data, 0)
	if p >= len(data) || data[p] != '{' {
		return 0, false
	}
	p = skipSpace(data, p+1)
	for p < len(data) {
		key, next, ok := readString(data, p)
		if !ok {
			return 0, false
		}
		p = skipSpace(data, next)
		if p >= len(data) || data[p] != ':' {
			return 0, false
		}
		p = skipSpace(data, p+1)
		if key == "metadata" {
			return p + 1, p < len(data) && data[p] == '{'
		}
		end, ok := skipValue(data, p)
		if !ok {
			return 0, false
		}
		p = skipSpace(data, end)
		if p >= len(data) || data[p] != ',' {
			return 0, false
		}
		p = skipSpace(data, p+1)
	}
	return 0, false
}

func skipSpace(data []byte, p int) int {
	for p < len(data) && (data[p] == ' ' || data[p] == '\n' || data[p] == '\t' || data[p] == '\r') {
		p++
	}
	return p
}

// readString reads the JSON string starting at data[p] and returns its raw
// contents (escapes are not interpreted: only plain keys are compared).
func readString(data []byte, p int) (string, int, bool) {
	if p >= len(data) || data[p] != '"' {
		return "", 0, false
	}
	end, ok := skipString(data, p)
	if !ok {
		return "", 0, false
	}
	return string(data[p+1 : end-1]), end, true
}

// skipString returns the offset just past the string starting at data[p].
func skipString(data []byte, p int) (int, bool) {
	for i := p + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the offset just past the JSON value starting at data[p].
func skipValue(data []byte, p int) (int, bool) {
	if p >= len(data) {
		return 0, false
	}
	switch data[p] {
	case '"':
		return skipString(data, p)
	case '{', '[':
		depth := 0
		for i := p; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default: // number, true, false, null
		i := p
		for i < len(data) && data[i] != ',' && data[i] != '}' && data[i] != ']' &&
			data[i] != ' ' && data[i] != '\n' {
			i++
		}
		return i, i > p
	}
}

// Zero resets out (a pointer to a struct) to its zero value, so that
// decoding into a reused object leaves nothing behind.
func Zero(out runtime.Object) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return NewInternalError("", fmt.Errorf("cannot decode into %T", out))
	}
	v.Elem().Set(reflect.Zero(v.Elem().Type()))
	return nil
}
