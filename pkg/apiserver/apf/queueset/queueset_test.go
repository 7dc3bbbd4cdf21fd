package queueset

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestDealerDeterministicDistinctHands(t *testing.T) {
	for _, tc := range []struct{ deck, hand int }{{1, 1}, {8, 1}, {64, 6}, {128, 6}, {16, 16}} {
		t.Run(fmt.Sprintf("deck %d hand %d", tc.deck, tc.hand), func(t *testing.T) {
			d := newDealer(tc.deck, tc.hand)
			for i := range 1000 {
				h := FlowHash("fs", fmt.Sprint("user-", i))
				var first, second []int
				d.deal(h, func(c int) { first = append(first, c) })
				d.deal(h, func(c int) { second = append(second, c) })
				if !slices.Equal(first, second) {
					t.Fatalf("hash %x dealt %v then %v", h, first, second)
				}
				if len(first) != tc.hand {
					t.Fatalf("hand %v, want %d cards", first, tc.hand)
				}
				sorted := slices.Sorted(slices.Values(first))
				if len(slices.Compact(slices.Clone(sorted))) != tc.hand {
					t.Fatalf("hand %v repeats a card", first)
				}
				if sorted[0] < 0 || sorted[len(sorted)-1] >= tc.deck {
					t.Fatalf("hand %v outside the deck of %d", first, tc.deck)
				}
			}
		})
	}
}

func TestDealerSpreadsFlows(t *testing.T) {
	const deck, flows = 64, 64 * 200
	d := newDealer(deck, 1)
	counts := make([]int, deck)
	for i := range flows {
		d.deal(FlowHash("fs", fmt.Sprint("user-", i)), func(c int) { counts[c]++ })
	}
	for q, n := range counts {
		if n < 100 || n > 300 { // 200 expected
			t.Errorf("queue %d got %d of %d flows", q, n, flows)
		}
	}
}

// hashTo returns a flow hash whose first card (hand size 1) is queue q.
func hashTo(q int) uint64 { return uint64(q) }

type outcome struct {
	r   *Request
	err error
}

// startAsync starts a request in the background and returns where its
// outcome will be. With out, a dispatched request sends its label there
// and finishes at once.
func startAsync(ctx context.Context, qs *QueueSet, flow uint64, w Work, label string, out chan<- string) chan outcome {
	done := make(chan outcome, 1)
	go func() {
		r, err := qs.Start(ctx, flow, w, Descr{FlowSchema: label})
		if err == nil && out != nil {
			out <- label
			r.Finish()
		}
		done <- outcome{r, err}
	}()
	return done
}

func TestFairDispatchOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		qs := New(Config{Queues: 8, HandSize: 1, QueueLengthLimit: 50}, 1)
		blocker, err := qs.Start(ctx, hashTo(7), Work{InitialSeats: 1}, Descr{})
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 20)
		var pending []chan outcome
		// A noisy flow queues six requests before a quiet one queues
		// three: they must alternate while both have some waiting.
		for i := range 6 {
			pending = append(pending, startAsync(ctx, qs, hashTo(0), Work{InitialSeats: 1}, fmt.Sprint("A", i), order))
			synctest.Wait()
		}
		for i := range 3 {
			pending = append(pending, startAsync(ctx, qs, hashTo(1), Work{InitialSeats: 1}, fmt.Sprint("B", i), order))
			synctest.Wait()
		}
		blocker.Finish()
		var got []string
		for _, p := range pending {
			got = append(got, <-order)
			if o := <-p; o.err != nil {
				t.Fatal(o.err)
			}
		}
		want := []string{"A0", "B0", "A1", "B1", "A2", "B2", "A3", "A4", "A5"}
		if !slices.Equal(got, want) {
			t.Errorf("dispatch order %v, want %v", got, want)
		}
	})
}

func TestWiderHeadIsNotOvertaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		qs := New(Config{Queues: 1, HandSize: 1, QueueLengthLimit: 50}, 4)
		held, _ := qs.Start(ctx, 0, Work{InitialSeats: 2}, Descr{})
		wide := startAsync(ctx, qs, 0, Work{InitialSeats: 3}, "wide", nil)
		synctest.Wait()
		narrow := startAsync(ctx, qs, 0, Work{InitialSeats: 1}, "narrow", nil)
		synctest.Wait()
		select {
		case <-wide:
			t.Fatal("3 seats dispatched with 2 of 4 in use")
		case <-narrow:
			t.Fatal("a narrow request overtook the wide one at the head")
		default:
		}
		held.Finish()
		synctest.Wait()
		w := <-wide
		n := <-narrow
		if w.err != nil || n.err != nil {
			t.Fatal(w.err, n.err)
		}
		w.r.Finish()
		n.r.Finish()
		// Wider than the level: runs alone.
		r, err := qs.Start(ctx, 0, Work{InitialSeats: 10}, Descr{})
		if err != nil {
			t.Fatal(err)
		}
		other := startAsync(ctx, qs, 0, Work{InitialSeats: 1}, "", nil)
		synctest.Wait()
		select {
		case <-other:
			t.Fatal("a request ran beside one wider than the level")
		default:
		}
		r.Finish()
		synctest.Wait()
		(<-other).r.Finish()
	})
}

func TestQueueLengthLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		qs := New(Config{Queues: 4, HandSize: 1, QueueLengthLimit: 2}, 1)
		held, _ := qs.Start(ctx, hashTo(0), Work{InitialSeats: 1}, Descr{})
		waiting := []chan outcome{
			startAsync(ctx, qs, hashTo(0), Work{InitialSeats: 1}, "", nil),
			startAsync(ctx, qs, hashTo(0), Work{InitialSeats: 1}, "", nil),
		}
		synctest.Wait()
		if _, err := qs.Start(ctx, hashTo(0), Work{InitialSeats: 1}, Descr{}); !errors.Is(err, ErrQueueFull) {
			t.Errorf("a third request in a queue of 2: %v, want %v", err, ErrQueueFull)
		}
		// Another queue still takes requests.
		other := startAsync(ctx, qs, hashTo(1), Work{InitialSeats: 1}, "", nil)
		synctest.Wait()
		if d := qs.Dump(); d.Waiting != 3 || len(d.Queues[0].Requests) != 2 || len(d.Queues[1].Requests) != 1 {
			t.Errorf("waiting %d, queue 0 %d, queue 1 %d; want 3, 2, 1", d.Waiting, len(d.Queues[0].Requests), len(d.Queues[1].Requests))
		}
		cancel()
		for _, w := range append(waiting, other) {
			if o := <-w; !errors.Is(o.err, ErrCancelled) {
				t.Errorf("a waiter of a cancelled request: %v, want %v", o.err, ErrCancelled)
			}
		}
		held.Finish()
		if d := qs.Dump(); d.Waiting != 0 || d.SeatsInUse != 0 {
			t.Errorf("left %d waiting, %d seats in use", d.Waiting, d.SeatsInUse)
		}
	})
}

func TestWaitTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		qs := New(Config{Queues: 2, HandSize: 1, QueueLengthLimit: 5}, 1)
		held, _ := qs.Start(t.Context(), 0, Work{InitialSeats: 1}, Descr{})
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := qs.Start(ctx, 0, Work{InitialSeats: 1}, Descr{}); !errors.Is(err, ErrTimeout) {
			t.Errorf("got %v, want %v", err, ErrTimeout)
		}
		if waited := time.Since(start); waited != 15*time.Second {
			t.Errorf("waited %v, want 15s", waited)
		}
		if d := qs.Dump(); d.Waiting != 0 {
			t.Errorf("%d left waiting", d.Waiting)
		}
		held.Finish()
	})
}

func TestRejectLevel(t *testing.T) {
	qs := New(Config{}, 2)
	a, err1 := qs.Start(t.Context(), 0, Work{InitialSeats: 1}, Descr{})
	b, err2 := qs.Start(t.Context(), 1, Work{InitialSeats: 1}, Descr{})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := qs.Start(t.Context(), 2, Work{InitialSeats: 1}, Descr{}); !errors.Is(err, ErrConcurrencyLimit) {
		t.Errorf("a third request on 2 seats: %v, want %v", err, ErrConcurrencyLimit)
	}
	a.Finish()
	a.Finish() // twice is once
	c, err := qs.Start(t.Context(), 2, Work{InitialSeats: 1}, Descr{})
	if err != nil {
		t.Fatalf("after a finish: %v", err)
	}
	b.Finish()
	c.Finish()
	if d := qs.Dump(); d.SeatsInUse != 0 || d.Executing != 0 {
		t.Errorf("left %d seats, %d executing", d.SeatsInUse, d.Executing)
	}
}

func TestFinalSeatsHeldForAdditionalLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		qs := New(Config{}, 4)
		r, _ := qs.Start(t.Context(), 0, Work{InitialSeats: 1, FinalSeats: 3, AdditionalLatency: 5 * time.Millisecond}, Descr{})
		if got := qs.Dump().SeatsInUse; got != 3 {
			t.Errorf("seats in use %d, want 3", got)
		}
		r.Finish()
		if got := qs.Dump().SeatsInUse; got != 3 {
			t.Errorf("seats in use right after finishing %d, want 3", got)
		}
		time.Sleep(5 * time.Millisecond)
		synctest.Wait()
		if got := qs.Dump().SeatsInUse; got != 0 {
			t.Errorf("seats in use after the additional latency %d, want 0", got)
		}
	})
}

func TestSetLimitDispatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		qs := New(Config{Queues: 1, HandSize: 1, QueueLengthLimit: 5}, 1)
		held, _ := qs.Start(t.Context(), 0, Work{InitialSeats: 1}, Descr{})
		w := startAsync(t.Context(), qs, 0, Work{InitialSeats: 1}, "", nil)
		synctest.Wait()
		if got := qs.TakeDemand(); got != 2 {
			t.Errorf("demand %d, want 2", got)
		}
		qs.SetLimit(2)
		o := <-w
		if o.err != nil {
			t.Fatal(o.err)
		}
		o.r.Finish()
		held.Finish()
	})
}

// TestStress runs many flows at once through a small level (under
// -race): the limit is never exceeded, every request is served or
// refused for a reason, and everything is given back.
func TestStress(t *testing.T) {
	const flows, perFlow, limit = 20, 100, 5
	qs := New(Config{Queues: 16, HandSize: 4, QueueLengthLimit: 10}, limit)
	var running, peak, served, refused atomic.Int64
	var wg sync.WaitGroup
	for f := range flows {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(f), 1))
			for range perFlow {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rnd.IntN(20))*time.Millisecond)
				seats := 1 + rnd.IntN(3)
				r, err := qs.Start(ctx, FlowHash("fs", fmt.Sprint(f)), Work{InitialSeats: seats}, Descr{})
				cancel()
				if err != nil {
					if !errors.Is(err, ErrQueueFull) && !errors.Is(err, ErrTimeout) {
						t.Errorf("refused for %v", err)
					}
					refused.Add(1)
					continue
				}
				n := running.Add(int64(seats))
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(time.Duration(rnd.IntN(200)) * time.Microsecond)
				running.Add(-int64(seats))
				served.Add(1)
				r.Finish()
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Errorf("%d seats in use at once, limit %d", p, limit)
	}
	if served.Load()+refused.Load() != flows*perFlow || served.Load() == 0 {
		t.Errorf("served %d, refused %d of %d", served.Load(), refused.Load(), flows*perFlow)
	}
	if d := qs.Dump(); d.SeatsInUse != 0 || d.Waiting != 0 || d.Executing != 0 {
		t.Errorf("left: %+v", d)
	}
}
