package backoff_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/miniapiserver/miniapiserver/pkg/backoff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestNext: the waits double from Initial up to Max, each with at most
// Jitter more, and start over after a run that lasted Reset.
func TestNext(t *testing.T) {
	const ms = time.Millisecond
	p := backoff.Policy{Initial: 100 * ms, Max: time.Second, Jitter: 0.2, Reset: 10 * time.Second}
	steps := []struct {
		name string
		ran  time.Duration
		base time.Duration // the wait before jitter
	}{
		{"first failure", 0, 100 * ms},
		{"doubles", time.Second, 200 * ms},
		{"doubles again", 0, 400 * ms},
		{"still below the cap", 9 * time.Second, 800 * ms},
		{"capped", 0, time.Second},
		{"stays capped", 0, time.Second},
		{"healthy run starts over", 10 * time.Second, 100 * ms},
		{"then doubles", 0, 200 * ms},
	}
	for range 100 { // jitter is random: every run stays within bounds
		b := backoff.New(p)
		for _, s := range steps {
			got := b.Next(s.ran)
			if max := s.base + time.Duration(p.Jitter*float64(s.base)); got < s.base || got > max {
				t.Fatalf("%s: got %v, want within [%v, %v]", s.name, got, s.base, max)
			}
		}
	}
}

// TestNextWithoutJitter: with no jitter the waits are exact, and a
// zero Reset makes every run healthy.
func TestNextWithoutJitter(t *testing.T) {
	b := backoff.New(backoff.Policy{Initial: time.Second, Max: 3 * time.Second, Reset: time.Hour})
	var got []time.Duration
	for range 4 {
		got = append(got, b.Next(0))
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	always := backoff.New(backoff.Policy{Initial: time.Second, Max: time.Minute})
	for i := range 3 {
		if d := always.Next(0); d != time.Second {
			t.Errorf("wait %d: got %v, want 1s (Reset 0: every run is healthy)", i, d)
		}
	}
}

// TestWait: Wait waits its time, or returns false as soon as ctx ends.
func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !backoff.Wait(context.Background(), time.Minute) || time.Since(start) != time.Minute {
			t.Errorf("Wait(1m): returned after %v", time.Since(start))
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		if backoff.Wait(ctx, time.Hour) || time.Since(start) != time.Second {
			t.Errorf("Wait(1h) cancelled after 1s: returned after %v", time.Since(start))
		}
	})
}
