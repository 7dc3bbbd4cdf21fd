package handlers

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// configMaps is a storage of ConfigMaps that counts the objects it makes
// (one per decoded item or event).
type configMaps struct{ made atomic.Int64 }

func (c *configMaps) New() runtime.Object { c.made.Add(1); return &corev1.ConfigMap{} }
func (c *configMaps) Destroy()            {}

func newScope() (*Scope, *configMaps) {
	st := &configMaps{}
	return &Scope{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Namespaced: true, Storage: st}, st
}

// storedConfigMaps returns n stored ConfigMaps with a value of size bytes
// each, as the watch cache holds them (the JSON of etcd, the revision
// apart). Values are random base64 text, as in certificates or tokens: it
// compresses to about three quarters, not to nothing.
func storedConfigMaps(tb testing.TB, n, size int) *storage.ListResult {
	tb.Helper()
	res := &storage.ListResult{ResourceVersion: int64(n + 100)}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < n; i++ {
		value := make([]byte, size)
		for j := range value {
			value[j] = alphabet[rng.IntN(len(alphabet))]
		}
		cm := &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%d", i), Namespace: "default",
				UID:               types.UID(fmt.Sprintf("6a9f1c4e-0d52-4b53-a3a4-%012x", rng.Uint64()&0xffffffffffff)),
				CreationTimestamp: metav1.Unix(1764000000, 0), Labels: map[string]string{"bucket": fmt.Sprint(i % 100)}},
			Data: map[string]string{"v": string(value)},
		}
		data, err := storage.Encode(cm)
		if err != nil {
			tb.Fatal(err)
		}
		obj, err := storage.NewObject("/registry/configmaps/default/"+cm.Name, int64(i+1), data)
		if err != nil {
			tb.Fatal(err)
		}
		res.Items = append(res.Items, obj)
	}
	return res
}

func protobufOutput(tb testing.TB) negotiation.Output {
	info, ok := negotiation.Serializer(negotiation.MediaTypeProtobuf)
	if !ok {
		tb.Fatal("no protobuf serializer")
	}
	return negotiation.Output{MediaType: negotiation.MediaTypeProtobuf, Info: info}
}

// TestProtobufListIsKubes checks that the streamed protobuf list of
// 10,000 items is byte for byte what apimachinery's encoder writes for the
// decoded list, and that it decodes back to every item.
func TestProtobufListIsKubes(t *testing.T) {
	s, _ := newScope()
	res := storedConfigMaps(t, 10000, 64)
	res.Continue, res.RemainingItemCount = "token", func(n int64) *int64 { return &n }(5)
	rec := httptest.NewRecorder()
	s.streamProtobufList(rec, httptest.NewRequest(http.MethodGet, "/", nil), res)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != negotiation.MediaTypeProtobuf {
		t.Fatalf("got %d %v", rec.Code, rec.Header())
	}
	list, err := s.decodeList(&corev1.ConfigMapList{}, res)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := protobufOutput(t).Info.Serializer.Encode(list, &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Body.Bytes(), want.Bytes()) {
		t.Fatalf("the streamed list (%d bytes) differs from apimachinery's (%d bytes)", rec.Body.Len(), want.Len())
	}
	decoded, _, err := protobufOutput(t).Info.Serializer.Decode(rec.Body.Bytes(), nil, &corev1.ConfigMapList{})
	if err != nil {
		t.Fatal(err)
	}
	got := decoded.(*corev1.ConfigMapList)
	if len(got.Items) != 10000 || got.Items[9999].Name != "bench-9999" || got.Items[9999].ResourceVersion != "10000" ||
		got.ResourceVersion != "10100" || got.Continue != "token" || *got.RemainingItemCount != 5 {
		t.Errorf("decoded: %d items, last %s@%s, list %s %q %v", len(got.Items), got.Items[9999].Name, got.Items[9999].ResourceVersion,
			got.ResourceVersion, got.Continue, got.RemainingItemCount)
	}
}

// TestProtobufListRemembered checks that the items of a cache that
// remember their encodings (within a budget) give the same list as those
// that do not, at the first LIST and the next, and that the budget bounds
// what they keep: half the budget, half the items remembered.
func TestProtobufListRemembered(t *testing.T) {
	s, _ := newScope()
	plain := storedConfigMaps(t, 1000, 64)
	list := func(res *storage.ListResult) []byte {
		rec := httptest.NewRecorder()
		s.streamProtobufList(rec, httptest.NewRequest(http.MethodGet, "/", nil), res)
		if rec.Code != 200 {
			t.Fatalf("got %d %s", rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	want := list(plain)
	for _, tc := range []struct {
		name       string
		budget     func(full int64) int64
		remembered int
	}{
		{"all", func(full int64) int64 { return full }, 1000},
		{"half", func(full int64) int64 { return full / 2 }, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The full size of the items' encodings, from a generous budget.
			probe := storage.NewEncodingBudget(1 << 30)
			probeRes := remembering(plain, probe)
			list(probeRes)
			budget := storage.NewEncodingBudget(tc.budget(probe.Used()))
			res := remembering(plain, budget)
			for i := range 2 {
				if got := list(res); !bytes.Equal(got, want) {
					t.Fatalf("LIST %d: %d bytes differ from the list without memory (%d bytes)", i, len(got), len(want))
				}
			}
			// All items are the same size, apart from a name one digit longer.
			if used, per := budget.Used(), probe.Used()/1000; used < int64(tc.remembered-2)*per || used > int64(tc.remembered)*(per+2) {
				t.Errorf("%d bytes remembered, want about %d items of %d", used, tc.remembered, per)
			}
			for _, item := range res.Items {
				item.Forget()
			}
			if used := budget.Used(); used != 0 {
				t.Errorf("%d bytes still used after Forget", used)
			}
			if got := list(res); !bytes.Equal(got, want) || budget.Used() != 0 {
				t.Errorf("after Forget: list differs (%v) or remembered again (%d bytes)", !bytes.Equal(got, want), budget.Used())
			}
		})
	}
}

func remembering(res *storage.ListResult, budget *storage.EncodingBudget) *storage.ListResult {
	out := *res
	out.Items = make([]*storage.Object, len(res.Items))
	for i, item := range res.Items {
		out.Items[i] = item.Remembering(budget)
	}
	return &out
}

// TestWatchEncodingShared checks that the protobuf encoding of a watch
// event is computed once for all the watchers that receive the same
// (Shareable) event, and once per watcher otherwise.
func TestWatchEncodingShared(t *testing.T) {
	tests := []struct {
		name      string
		shareable bool
		decodes   int64
	}{
		{"shareable event", true, 1},
		{"plain object", false, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, st := newScope()
			obj := storedConfigMaps(t, 1, 10).Items[0]
			if tc.shareable {
				obj = obj.Shareable()
			}
			ev := storage.Event{Type: watch.Modified, Object: obj, ResourceVersion: obj.ResourceVersion}
			var frames [][]byte
			for i := 0; i < 3; i++ {
				var buf bytes.Buffer
				enc, err := s.newEventEncoder(httptest.NewRequest(http.MethodGet, "/", nil), protobufOutput(t))
				if err != nil {
					t.Fatal(err)
				}
				enc.bw = bufio.NewWriter(&buf)
				if err := enc.write(ev); err != nil {
					t.Fatal(err)
				}
				enc.bw.Flush()
				frames = append(frames, buf.Bytes())
			}
			if got := st.made.Load(); got != tc.decodes {
				t.Errorf("%d decodes for 3 watchers, want %d", got, tc.decodes)
			}
			for _, f := range frames[1:] {
				if !bytes.Equal(f, frames[0]) {
					t.Fatal("watchers got different frames")
				}
			}
			// The frame: a 4-byte length, then the WatchEvent.
			var event metav1.WatchEvent
			if n := int(frames[0][0])<<24 | int(frames[0][1])<<16 | int(frames[0][2])<<8 | int(frames[0][3]); n != len(frames[0])-4 {
				t.Fatalf("frame length %d of %d bytes", n, len(frames[0]))
			}
			if err := event.Unmarshal(frames[0][4:]); err != nil {
				t.Fatal(err)
			}
			decoded, _, err := protobufOutput(t).Info.Serializer.Decode(event.Object.Raw, nil, &corev1.ConfigMap{})
			if err != nil || event.Type != "MODIFIED" || decoded.(*corev1.ConfigMap).Name != "bench-0" || decoded.(*corev1.ConfigMap).ResourceVersion != "1" {
				t.Errorf("event %s %#v %v", event.Type, decoded, err)
			}
		})
	}
}

// TestBodyWriterGzip checks the threshold: compressed above 128 KiB when
// gzip is accepted, streamed plainly otherwise, written whole with its
// length when small.
func TestBodyWriterGzip(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		encoding string
		gzipped  bool
	}{
		{"small", 1000, "gzip", false},
		{"at the threshold", gzipThreshold, "gzip", false},
		{"over the threshold", gzipThreshold + 1, "gzip", true},
		{"large without gzip", 4 * gzipThreshold, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Accept-Encoding", tc.encoding)
			rec := httptest.NewRecorder()
			bw := newBodyWriter(rec, r, "application/json", 200)
			data := bytes.Repeat([]byte("0123456789abcdef"), tc.size/16+1)[:tc.size]
			for chunk := data; len(chunk) > 0; { // written in pieces, as a list is
				n := min(len(chunk), 32*1024)
				bw.Write(chunk[:n])
				chunk = chunk[n:]
			}
			if err := bw.Close(); err != nil {
				t.Fatal(err)
			}
			body := rec.Body.Bytes()
			if gz := rec.Header().Get("Content-Encoding") == "gzip"; gz != tc.gzipped {
				t.Fatalf("gzip=%v, want %v", gz, tc.gzipped)
			}
			if tc.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(body, data) {
				t.Errorf("body of %d bytes, want %d", len(body), len(data))
			}
			if cl := rec.Header().Get("Content-Length"); (cl != "") != (tc.encoding == "gzip" && !tc.gzipped) {
				t.Errorf("Content-Length %q", cl)
			}
		})
	}
}

// The benchmarks below encode a list of 10,000 ConfigMaps of 1 KiB (the
// load tool's objects) to io.Discard, and one watch event for 100 watchers.

func benchmarkList(b *testing.B, accept, encoding string) {
	s, _ := newScope()
	res := storedConfigMaps(b, 10000, 1024)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if encoding != "" {
		r.Header.Set("Accept-Encoding", encoding)
	}
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.n = 0
		switch accept {
		case negotiation.MediaTypeProtobuf:
			s.streamProtobufList(w, r, res)
		default:
			s.streamJSONList(w, r, res)
		}
	}
	b.ReportMetric(float64(w.n), "bytes/list")
}

func BenchmarkListJSON10k(b *testing.B)     { benchmarkList(b, negotiation.MediaTypeJSON, "") }
func BenchmarkListJSON10kGzip(b *testing.B) { benchmarkList(b, negotiation.MediaTypeJSON, "gzip") }
func BenchmarkListProtobuf10k(b *testing.B) { benchmarkList(b, negotiation.MediaTypeProtobuf, "") }

// BenchmarkListProtobuf10kRemembered is the protobuf list of a watch
// cache whose items remember their encodings (the budget holds them all):
// the first LIST encodes them, the next ones only copy.
func BenchmarkListProtobuf10kRemembered(b *testing.B) {
	s, _ := newScope()
	res := remembering(storedConfigMaps(b, 10000, 1024), storage.NewEncodingBudget(1<<30))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &discardWriter{header: http.Header{}}
	s.streamProtobufList(w, r, res)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.n = 0
		s.streamProtobufList(w, r, res)
	}
	b.ReportMetric(float64(w.n), "bytes/list")
}
func BenchmarkListProtobuf10kGzip(b *testing.B) {
	benchmarkList(b, negotiation.MediaTypeProtobuf, "gzip")
}

// BenchmarkListDecodeEncode10k is the protobuf list as kube makes it, for
// comparison: every item decoded into one list, then encoded.
func BenchmarkListDecodeEncode10k(b *testing.B) {
	s, _ := newScope()
	res := storedConfigMaps(b, 10000, 1024)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		list, err := s.decodeList(&corev1.ConfigMapList{}, res)
		if err != nil {
			b.Fatal(err)
		}
		writeObject(w, r, protobufOutput(b), 200, list)
	}
}

// benchmarkWatchFanout writes one MODIFIED event to 100 protobuf watchers.
func benchmarkWatchFanout(b *testing.B, shareable bool) {
	s, _ := newScope()
	base := storedConfigMaps(b, 1, 1024).Items[0]
	encoders := make([]*eventEncoder, 100)
	for i := range encoders {
		enc, err := s.newEventEncoder(httptest.NewRequest(http.MethodGet, "/", nil), protobufOutput(b))
		if err != nil {
			b.Fatal(err)
		}
		enc.bw = bufio.NewWriter(io.Discard)
		encoders[i] = enc
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		obj := base.WithResourceVersion(int64(i + 2))
		if shareable {
			obj = obj.Shareable()
		}
		ev := storage.Event{Type: watch.Modified, Object: obj, ResourceVersion: obj.ResourceVersion}
		for _, enc := range encoders {
			if err := enc.write(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkWatchFanout100Protobuf(b *testing.B)         { benchmarkWatchFanout(b, true) }
func BenchmarkWatchFanout100ProtobufUnshared(b *testing.B) { benchmarkWatchFanout(b, false) }

// discardWriter is an http.ResponseWriter that counts and drops the body.
type discardWriter struct {
	header http.Header
	n      int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
