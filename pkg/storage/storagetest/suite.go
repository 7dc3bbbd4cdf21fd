package storagetest

import "testing"

// Run runs the whole conformance suite against the implementation h
// builds.
func Run(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Create", testCreate},
		{"Get", testGet},
		{"GuaranteedUpdate", testGuaranteedUpdate},
		{"GuaranteedUpdateConcurrent", testGuaranteedUpdateConcurrent},
		{"GuaranteedUpdateStaleCache", testGuaranteedUpdateStaleCache},
		{"FailedCheckOnGuess", testFailedCheckOnGuess},
		{"Delete", testDelete},
		{"Count", testCount},
		{"ObjectWriter", testObjectWriter},
		{"List", testList},
		{"ListPaging", testListPaging},
		{"ListResourceVersion", testListResourceVersion},
		{"ListCompacted", testListCompacted},
		{"Watch", testWatch},
		{"WatchInitialEvents", testWatchInitialEvents},
		{"WatchBookmarksOnlyWhenAsked", testWatchBookmarksOnlyWhenAsked},
		{"WatchSelectorTransitions", testWatchSelectorTransitions},
		{"WatchCompacted", testWatchCompacted},
		{"WatchStop", testWatchStop},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}
