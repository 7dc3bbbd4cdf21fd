package clientgo

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// candidate is one participant of a leader election.
type candidate struct {
	id      string
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	leading bool
	stopped bool
}

func (c *candidate) is(leading, stopped bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leading == leading && c.stopped == stopped
}

// runCandidate runs client-go's leader election for id on the Lease
// ns/name until its cancel.
func runCandidate(t *testing.T, cs kubernetes.Interface, ns, name, id string, release bool) *candidate {
	t.Helper()
	c := &candidate{id: id, done: make(chan struct{})}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: name},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   2 * time.Second,
		RenewDeadline:   1500 * time.Millisecond,
		RetryPeriod:     100 * time.Millisecond,
		ReleaseOnCancel: release,
		Name:            name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.leading = true
			},
			OnStoppedLeading: func() {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.leading, c.stopped = false, true
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() {
		defer close(c.done)
		le.Run(runCtx)
	}()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// TestLeaderElection runs two candidates for a Lease: one leads, the
// other takes over when the first stops, at once when the leader
// releases the Lease, after its duration when the leader just vanishes.
func TestLeaderElection(t *testing.T) {
	cs := clientset(t)
	for _, release := range []bool{true, false} {
		name := map[bool]string{true: "released", false: "expired"}[release]
		t.Run(name, func(t *testing.T) {
			ns := namespace(t)
			a := runCandidate(t, cs, ns, name, "a", release)
			waitFor(t, "a to lead", func() bool { return a.is(true, false) })
			b := runCandidate(t, cs, ns, name, "b", release)
			lease, err := cs.CoordinationV1().Leases(ns).Get(ctx(t), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if *lease.Spec.HolderIdentity != "a" || *lease.Spec.LeaseDurationSeconds != 2 || lease.Spec.AcquireTime == nil || lease.Spec.RenewTime == nil {
				t.Errorf("lease held by a: %+v", lease.Spec)
			}
			if b.is(true, false) {
				t.Fatal("b leads too")
			}
			stopped := time.Now()
			a.cancel()
			<-a.done
			if !a.is(false, true) {
				t.Error("a did not stop leading")
			}
			waitFor(t, "b to lead", func() bool { return b.is(true, false) })
			took := time.Since(stopped)
			if release && took > 1500*time.Millisecond {
				t.Errorf("b took over a released lease after %v", took)
			}
			if !release && took < time.Second {
				t.Errorf("b took over an unexpired lease after %v", took)
			}
			lease, err = cs.CoordinationV1().Leases(ns).Get(ctx(t), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if *lease.Spec.HolderIdentity != "b" || *lease.Spec.LeaseTransitions != 1 {
				t.Errorf("lease after the take-over: holder %s, transitions %d", *lease.Spec.HolderIdentity, *lease.Spec.LeaseTransitions)
			}
		})
	}
}
