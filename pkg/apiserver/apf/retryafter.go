package apf

import (
	"sync"
	"time"
)

// maxRetryAfter bounds the Retry-After of a rejection, in seconds.
const maxRetryAfter = 32

// droppedTracker chooses the Retry-After of each level's rejections as
// kube's does, like TCP's congestion window: it starts at 1 s, doubles
// (at most every Retry-After seconds) while the level dropped at least
// three times as many requests as it in the last Retry-After seconds,
// and falls by one second when it dropped fewer than it.
type droppedTracker struct {
	mu     sync.Mutex
	levels map[string]*droppedStats
}

type droppedStats struct {
	retryAfter int64
	raisedAt   int64
	// perSecond are the drops of the last maxRetryAfter seconds, by
	// unix second.
	perSecond map[int64]int64
	current   int64 // the second being counted
}

func newDroppedTracker() *droppedTracker {
	return &droppedTracker{levels: map[string]*droppedStats{}}
}

// dropped records a rejection of level at now and returns the
// Retry-After to send.
func (t *droppedTracker) dropped(level string, now time.Time) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.levels[level]
	if s == nil {
		s = &droppedStats{retryAfter: 1, perSecond: map[int64]int64{}}
		t.levels[level] = s
	}
	sec := now.Unix()
	if sec != s.current {
		// A new second: judge the last retryAfter seconds before it.
		s.current = sec
		for at := range s.perSecond {
			if sec-at > maxRetryAfter {
				delete(s.perSecond, at)
			}
		}
		var recent int64
		for at, n := range s.perSecond {
			if sec-at <= s.retryAfter {
				recent += n
			}
		}
		switch {
		case sec-s.raisedAt >= s.retryAfter && recent >= 3*s.retryAfter:
			s.retryAfter = min(2*s.retryAfter, maxRetryAfter)
			s.raisedAt = sec
		case recent < s.retryAfter && s.retryAfter > 1:
			s.retryAfter--
		}
	}
	s.perSecond[sec]++
	return s.retryAfter
}
