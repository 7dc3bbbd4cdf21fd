package storage

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestObjectJSON(t *testing.T) {
	for _, tc := range []struct {
		name           string
		data           string
		want           string
		wantNoTypeMeta string
	}{
		{
			name:           "after uid, as kube orders it",
			data:           `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u-1","creationTimestamp":null},"data":{"k":"v"}}`,
			want:           `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u-1","resourceVersion":"42","creationTimestamp":null},"data":{"k":"v"}}`,
			wantNoTypeMeta: `{"metadata":{"name":"a","namespace":"d","uid":"u-1","resourceVersion":"42","creationTimestamp":null},"data":{"k":"v"}}`,
		},
		{
			name:           "no uid: first in metadata",
			data:           `{"kind":"X","apiVersion":"v1","metadata":{"name":"a"}}`,
			want:           `{"kind":"X","apiVersion":"v1","metadata":{"resourceVersion":"42","name":"a"}}`,
			wantNoTypeMeta: `{"metadata":{"resourceVersion":"42","name":"a"}}`,
		},
		{
			name:           "empty metadata",
			data:           `{"kind":"X","apiVersion":"v1","metadata":{}}`,
			want:           `{"kind":"X","apiVersion":"v1","metadata":{"resourceVersion":"42"}}`,
			wantNoTypeMeta: `{"metadata":{"resourceVersion":"42"}}`,
		},
		{
			name:           "owner reference uid is not metadata's",
			data:           `{"kind":"X","apiVersion":"v1","metadata":{"name":"a","labels":{"uid":"x"},"ownerReferences":[{"uid":"o"}]}}`,
			want:           `{"kind":"X","apiVersion":"v1","metadata":{"resourceVersion":"42","name":"a","labels":{"uid":"x"},"ownerReferences":[{"uid":"o"}]}}`,
			wantNoTypeMeta: `{"metadata":{"resourceVersion":"42","name":"a","labels":{"uid":"x"},"ownerReferences":[{"uid":"o"}]}}`,
		},
		{
			name:           "escaped quotes in a name before uid",
			data:           `{"kind":"X","apiVersion":"v1","metadata":{"name":"a\"b","uid":"u"}}`,
			want:           `{"kind":"X","apiVersion":"v1","metadata":{"name":"a\"b","uid":"u","resourceVersion":"42"}}`,
			wantNoTypeMeta: `{"metadata":{"name":"a\"b","uid":"u","resourceVersion":"42"}}`,
		},
		{
			name:           "no type meta",
			data:           `{"metadata":{"name":"a","uid":"u"}}`,
			want:           `{"metadata":{"name":"a","uid":"u","resourceVersion":"42"}}`,
			wantNoTypeMeta: `{"metadata":{"name":"a","uid":"u","resourceVersion":"42"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewObject("/k", 42, []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(o.AppendJSON(nil, true)); got != tc.want {
				t.Errorf("AppendJSON(typeMeta):\n got %s\nwant %s", got, tc.want)
			}
			if got := string(o.AppendJSON([]byte("prefix"), false)); got != "prefix"+tc.wantNoTypeMeta {
				t.Errorf("AppendJSON(no typeMeta):\n got %s\nwant prefix%s", got, tc.wantNoTypeMeta)
			}
			if o.JSONSize() != len(tc.want) {
				t.Errorf("JSONSize %d, want %d", o.JSONSize(), len(tc.want))
			}
			if !json.Valid([]byte(tc.want)) {
				t.Fatal("test case output is not JSON")
			}
		})
	}
}

func TestObjectMatchesEncodingJSON(t *testing.T) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "1234", ResourceVersion: "77", Labels: map[string]string{"x": "y"}},
		Data:       map[string]string{"k": "v"},
	}
	want, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Encode(cm.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewObject("/k", 77, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.AppendJSON(nil, true); !bytes.Equal(got, want) {
		t.Fatalf("spliced encoding differs from encoding/json's:\n got %s\nwant %s", got, want)
	}
	back := &corev1.ConfigMap{}
	if err := o.Decode(back); err != nil || back.ResourceVersion != "77" {
		t.Fatalf("decode: %v, resourceVersion %q", err, back.ResourceVersion)
	}
}

func TestNewObjectRejectsDataWithoutMetadata(t *testing.T) {
	if _, err := NewObject("/k", 1, []byte(`{"kind":"X"}`)); err == nil {
		t.Fatal("want an error for data without metadata")
	}
}

// A Shareable object converts once per version, however many watchers ask
// at once, and the conversion remembers its own encodings; an object that
// is not shareable converts on every call.
func TestObjectConverted(t *testing.T) {
	t.Parallel()
	obj, err := NewObject("/k", 7, []byte(`{"kind":"X","apiVersion":"v2","metadata":{"name":"a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var conversions, encodings atomic.Int32
	convert := func() (*Object, error) {
		conversions.Add(1)
		return NewObject("/k", 7, []byte(`{"kind":"X","apiVersion":"v1","metadata":{"name":"a"}}`))
	}
	shared := obj.Shareable()
	var wg sync.WaitGroup
	got := make([]*Object, 8)
	for i := range got {
		wg.Go(func() {
			c, err := shared.Converted("v1", convert)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := c.Encoded("proto", func() ([]byte, error) { encodings.Add(1); return []byte("p"), nil }); err != nil {
				t.Error(err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	if n := conversions.Load(); n != 1 {
		t.Errorf("a shared event converted %d times, want 1", n)
	}
	if n := encodings.Load(); n != 1 {
		t.Errorf("its conversion encoded %d times, want 1", n)
	}
	if string(got[0].AppendJSON(nil, true)) != `{"kind":"X","apiVersion":"v1","metadata":{"resourceVersion":"7","name":"a"}}` {
		t.Errorf("converted: %s", got[0].AppendJSON(nil, true))
	}
	if _, err := shared.Converted("v3", convert); err != nil || conversions.Load() != 2 {
		t.Errorf("another version: %v, %d conversions, want 2", err, conversions.Load())
	}
	for range 2 {
		if _, err := obj.Converted("v1", convert); err != nil {
			t.Fatal(err)
		}
	}
	if n := conversions.Load(); n != 4 {
		t.Errorf("an object that is not shared converted %d times in all, want 4", n)
	}
}

// TestResourceVersionOfUnstructured: an unstructured object encodes its
// keys sorted, so a field before metadata may hold an embedded resource's
// metadata: the resourceVersion still goes into the object's own.
func TestResourceVersionOfUnstructured(t *testing.T) {
	data := []byte(`{"apiVersion":"example.com/v1","data":{"metadata":{"uid":"inner"}},"kind":"Widget","metadata":{"name":"w","uid":"outer"},"spec":{}}`)
	obj, err := NewObject("/registry/example.com/widgets/w", 42, data)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"example.com/v1","data":{"metadata":{"uid":"inner"}},"kind":"Widget","metadata":{"name":"w","uid":"outer","resourceVersion":"42"},"spec":{}}`
	if got := string(obj.AppendJSON(nil, true)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
