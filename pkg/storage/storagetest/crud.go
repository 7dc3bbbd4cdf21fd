package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

func testCreate(t *testing.T, h Harness) {
	f := newFixture(t, h)
	out := f.create("ns", "a", "", nil)
	rv := rvOf(t, out)
	if out.Name != "a" || out.Spec.Containers[0].Image != "busybox" {
		t.Fatalf("created object not returned: %+v", out)
	}

	err := f.s.Create(f.ctx, f.key("ns", "a"), NewPod("ns", "a", "", nil), &corev1.Pod{}, 0)
	wantCode(t, err, storage.ErrCodeKeyExists)

	withRV := NewPod("ns", "b", "", nil)
	withRV.ResourceVersion = "5"
	err = f.s.Create(f.ctx, f.key("ns", "b"), withRV, &corev1.Pod{}, 0)
	wantCode(t, err, storage.ErrCodeInvalidObj)

	got := &corev1.Pod{}
	if err := f.s.Get(f.ctx, f.key("ns", "a"), storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if rvOf(t, got) != rv {
		t.Fatalf("get after create: resourceVersion %s, want %d", got.ResourceVersion, rv)
	}
}

func testGet(t *testing.T, h Harness) {
	f := newFixture(t, h)
	created := f.create("ns", "a", "n1", nil)
	rv := rvOf(t, created)

	for _, tc := range []struct {
		name string
		rv   string
	}{
		{"latest", ""},
		{"not older than the write", strconv.FormatInt(rv, 10)},
		// A cache may answer "any" from a state older than the write; after
		// the read above it has caught up with it.
		{"any", "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := &corev1.Pod{}
			if err := f.s.Get(f.ctx, f.key("ns", "a"), storage.GetOptions{ResourceVersion: tc.rv}, got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.NodeName != "n1" || rvOf(t, got) < rv {
				t.Fatalf("got %s at %s, want n1 at >= %d", got.Spec.NodeName, got.ResourceVersion, rv)
			}
		})
	}

	err := f.s.Get(f.ctx, f.key("ns", "missing"), storage.GetOptions{}, &corev1.Pod{})
	wantCode(t, err, storage.ErrCodeKeyNotFound)

	zero := &corev1.Pod{}
	zero.Name = "leftover"
	if err := f.s.Get(f.ctx, f.key("ns", "missing"), storage.GetOptions{IgnoreNotFound: true}, zero); err != nil {
		t.Fatalf("IgnoreNotFound: %v", err)
	}
	if zero.Name != "" {
		t.Fatalf("IgnoreNotFound left %q in the output", zero.Name)
	}

	err = f.s.Get(f.ctx, f.key("ns", "a"), storage.GetOptions{ResourceVersion: strconv.FormatInt(rv+1000, 10)}, &corev1.Pod{})
	wantCode(t, err, storage.ErrCodeTooLargeResourceVersion)

	err = f.s.Get(f.ctx, f.key("ns", "a"), storage.GetOptions{ResourceVersion: "x"}, &corev1.Pod{})
	wantCode(t, err, storage.ErrCodeInvalidObj)
}

func testGuaranteedUpdate(t *testing.T, h Harness) {
	f := newFixture(t, h)
	created := f.create("ns", "a", "", nil)
	rv := rvOf(t, created)

	updated := f.update("ns", "a", func(p *corev1.Pod) { p.Labels = map[string]string{"x": "1"} })
	if rvOf(t, updated) <= rv || updated.Labels["x"] != "1" {
		t.Fatalf("update: got rv %s labels %v, want rv > %d and x=1", updated.ResourceVersion, updated.Labels, rv)
	}

	t.Run("no change keeps the revision", func(t *testing.T) {
		same := f.update("ns", "a", func(p *corev1.Pod) {})
		if same.ResourceVersion != updated.ResourceVersion {
			t.Fatalf("no-op update moved resourceVersion %s -> %s", updated.ResourceVersion, same.ResourceVersion)
		}
	})

	// tryUpdate may first see a stale cached state (a cache's guess): it
	// must cope with any state.
	identity := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		p := in.(*corev1.Pod)
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels["touched"] = "yes"
		return p, nil, nil
	}
	t.Run("uid precondition", func(t *testing.T) {
		uid := types.UID("other")
		err := f.s.GuaranteedUpdate(f.ctx, f.key("ns", "a"), &corev1.Pod{}, false,
			&storage.Preconditions{UID: &uid}, identity, nil)
		wantCode(t, err, storage.ErrCodeResourceVersionConflicts)
	})
	t.Run("resourceVersion precondition", func(t *testing.T) {
		stale := strconv.FormatInt(rv, 10)
		err := f.s.GuaranteedUpdate(f.ctx, f.key("ns", "a"), &corev1.Pod{}, false,
			&storage.Preconditions{ResourceVersion: &stale}, identity, nil)
		wantCode(t, err, storage.ErrCodeResourceVersionConflicts)
	})
	t.Run("tryUpdate error is returned", func(t *testing.T) {
		boom := errors.New("boom")
		err := f.s.GuaranteedUpdate(f.ctx, f.key("ns", "a"), &corev1.Pod{}, false, nil,
			func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) { return nil, nil, boom }, nil)
		if !errors.Is(err, boom) {
			t.Fatalf("want boom, got %v", err)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		err := f.s.GuaranteedUpdate(f.ctx, f.key("ns", "missing"), &corev1.Pod{}, false, nil, identity, nil)
		wantCode(t, err, storage.ErrCodeKeyNotFound)
	})
	t.Run("missing key with ignoreNotFound creates", func(t *testing.T) {
		out := &corev1.Pod{}
		err := f.s.GuaranteedUpdate(f.ctx, f.key("ns", "new"), out, true, nil,
			func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				if in.(*corev1.Pod).Name != "" {
					return nil, nil, fmt.Errorf("want a zero object, got %v", in)
				}
				return NewPod("ns", "new", "", nil), nil, nil
			}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.Name != "new" || rvOf(t, out) == 0 {
			t.Fatalf("create on update: %+v", out.ObjectMeta)
		}
	})
}

// testGuaranteedUpdateConcurrent: racing read-modify-writes lose nothing.
func testGuaranteedUpdateConcurrent(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.create("ns", "counter", "", map[string]string{"n": "0"})
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := f.s.GuaranteedUpdate(f.ctx, f.key("ns", "counter"), &corev1.Pod{}, false, nil,
					func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
						p := in.(*corev1.Pod)
						n, _ := strconv.Atoi(p.Labels["n"])
						p.Labels["n"] = strconv.Itoa(n + 1)
						return p, nil, nil
					}, nil)
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := f.s.Get(f.ctx, f.key("ns", "counter"), storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["n"] != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, want %d", got.Labels["n"], workers*each)
	}
}

// testGuaranteedUpdateStaleCache: a stale cachedExisting guess must not
// overwrite a newer state, and must not fail a precondition that holds.
func testGuaranteedUpdateStaleCache(t *testing.T, h Harness) {
	f := newFixture(t, h)
	stale := f.create("ns", "a", "", map[string]string{"v": "1"})
	f.update("ns", "a", func(p *corev1.Pod) { p.Labels["v"] = "2" })
	current := &corev1.Pod{}
	if err := f.s.Get(f.ctx, f.key("ns", "a"), storage.GetOptions{}, current); err != nil {
		t.Fatal(err)
	}
	rv := current.ResourceVersion
	out := &corev1.Pod{}
	err := f.s.GuaranteedUpdate(f.ctx, f.key("ns", "a"), out, false,
		&storage.Preconditions{ResourceVersion: &rv},
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			p := in.(*corev1.Pod)
			p.Labels["seen"] = p.Labels["v"]
			return p, nil, nil
		}, stale)
	if err != nil {
		t.Fatal(err)
	}
	if out.Labels["seen"] != "2" {
		t.Fatalf("update saw v=%s, want the current v=2", out.Labels["seen"])
	}

	// A delete with a stale guess deletes the current state.
	deleted := &corev1.Pod{}
	if err := f.s.Delete(f.ctx, f.key("ns", "a"), deleted, nil, nil, stale); err != nil {
		t.Fatal(err)
	}
	if deleted.Labels["seen"] != "2" {
		t.Fatalf("delete returned a stale state: %v", deleted.Labels)
	}
}

// testFailedCheckOnGuess: a check that fails on a cached guess is run
// again on the current state only when the guess was stale; on a guess
// that was current the failure stands after one run (the check may call
// an admission webhook: one refused request, one call).
func testFailedCheckOnGuess(t *testing.T, h Harness) {
	f := newFixture(t, h)
	guess := f.create("ns", "a", "", map[string]string{"v": "1"})
	refuse := errors.New("not now")
	for _, tc := range []struct {
		name string
		runs int
		op   func(check func() error) error
	}{
		{"delete", 1, func(check func() error) error {
			return f.s.Delete(f.ctx, f.key("ns", "a"), &corev1.Pod{}, nil,
				func(context.Context, runtime.Object) error { return check() }, guess)
		}},
		{"update", 1, func(check func() error) error {
			return f.s.GuaranteedUpdate(f.ctx, f.key("ns", "a"), &corev1.Pod{}, false, nil,
				func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) { return nil, nil, check() }, guess)
		}},
	} {
		runs := 0
		if err := tc.op(func() error { runs++; return refuse }); !errors.Is(err, refuse) || runs != tc.runs {
			t.Errorf("%s on a current guess: error %v after %d runs of the check, want %v after %d", tc.name, err, runs, refuse, tc.runs)
		}
	}
	f.update("ns", "a", func(p *corev1.Pod) { p.Labels["v"] = "2" })
	runs := 0
	err := f.s.Delete(f.ctx, f.key("ns", "a"), &corev1.Pod{}, nil, func(_ context.Context, obj runtime.Object) error {
		runs++
		if obj.(*corev1.Pod).Labels["v"] != "2" {
			return refuse
		}
		return nil
	}, guess)
	if err != nil || runs != 2 {
		t.Errorf("delete on a stale guess: error %v after %d runs of the check, want success after 2", err, runs)
	}
}

func testDelete(t *testing.T, h Harness) {
	f := newFixture(t, h)
	created := f.create("ns", "a", "", nil)
	rv := rvOf(t, created)

	uid := types.UID("other")
	err := f.s.Delete(f.ctx, f.key("ns", "a"), &corev1.Pod{}, &storage.Preconditions{UID: &uid}, nil, nil)
	wantCode(t, err, storage.ErrCodeResourceVersionConflicts)

	refuse := errors.New("not now")
	err = f.s.Delete(f.ctx, f.key("ns", "a"), &corev1.Pod{}, nil,
		func(ctx context.Context, obj runtime.Object) error { return refuse }, nil)
	if !errors.Is(err, refuse) {
		t.Fatalf("validateDeletion error not returned: %v", err)
	}

	deleted := f.delete("ns", "a")
	if deleted.Name != "a" || rvOf(t, deleted) <= rv {
		t.Fatalf("deleted object: %s at %s, want a at > %d", deleted.Name, deleted.ResourceVersion, rv)
	}
	err = f.s.Get(f.ctx, f.key("ns", "a"), storage.GetOptions{}, &corev1.Pod{})
	wantCode(t, err, storage.ErrCodeKeyNotFound)
	err = f.s.Delete(f.ctx, f.key("ns", "a"), &corev1.Pod{}, nil, nil, nil)
	wantCode(t, err, storage.ErrCodeKeyNotFound)
}

func testCount(t *testing.T, h Harness) {
	f := newFixture(t, h)
	for i := range 3 {
		f.create("ns", fmt.Sprintf("p%d", i), "", nil)
	}
	f.create("other", "p", "", nil)
	n, err := f.s.Count(f.ctx, f.cfg.ResourcePrefix)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("count = %d, want 4", n)
	}
}
