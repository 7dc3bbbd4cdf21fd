package storagetest

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// testObjectWriter: a store that tells what a write stored gives the
// encoding of the object it decodes into out (resourceVersion included),
// in plaintext, for a create, an update, and an update that changes
// nothing (the state kept, at its revision).
func testObjectWriter(t *testing.T, h Harness) {
	f := newFixture(t, h)
	w, ok := f.s.(storage.ObjectWriter)
	if !ok {
		t.Skipf("%T does not implement storage.ObjectWriter", f.s)
	}
	created := &corev1.Pod{}
	stored, err := w.CreateObject(f.ctx, f.key("ns", "a"), NewPod("ns", "a", "n1", nil), created, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameEncoding(t, "create", stored, created)

	_, err = w.CreateObject(f.ctx, f.key("ns", "a"), NewPod("ns", "a", "", nil), &corev1.Pod{}, 0)
	wantCode(t, err, storage.ErrCodeKeyExists)

	label := func(value string) storage.UpdateFunc {
		return func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			p := in.(*corev1.Pod)
			p.Labels = map[string]string{"x": value}
			return p, nil, nil
		}
	}
	updated := &corev1.Pod{}
	stored, err = w.GuaranteedUpdateObject(f.ctx, f.key("ns", "a"), updated, false, nil, label("1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sameEncoding(t, "update", stored, updated)
	if stored.ResourceVersion <= rvOf(t, created) {
		t.Fatalf("update stored at revision %d, not after the create's %s", stored.ResourceVersion, created.ResourceVersion)
	}

	kept := &corev1.Pod{}
	stored, err = w.GuaranteedUpdateObject(f.ctx, f.key("ns", "a"), kept, false, nil, label("1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sameEncoding(t, "update that changes nothing", stored, kept)
	if kept.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("no-op update moved resourceVersion %s -> %s", updated.ResourceVersion, kept.ResourceVersion)
	}

	_, err = w.GuaranteedUpdateObject(f.ctx, f.key("ns", "missing"), &corev1.Pod{}, false, nil, label("1"), nil)
	wantCode(t, err, storage.ErrCodeKeyNotFound)
}

// sameEncoding fails unless stored, written out, is the JSON of out.
func sameEncoding(t *testing.T, what string, stored *storage.Object, out runtime.Object) {
	t.Helper()
	if stored == nil {
		t.Fatalf("%s: no stored object", what)
	}
	want, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.AppendJSON(nil, true); string(got) != string(want) {
		t.Fatalf("%s: stored object\n%s\nis not the result\n%s", what, got, want)
	}
	if rv := rvOf(t, out); stored.ResourceVersion != rv {
		t.Fatalf("%s: stored at revision %d, result at %d", what, stored.ResourceVersion, rv)
	}
}
