// Package chaos runs miniapiserver as three replica processes over a
// 3-member etcd cluster (inside the test binary), drives it with steady
// writers, raw watchers and client-go informers that move to another
// replica when theirs dies, and injects faults on a schedule: a replica
// killed with SIGKILL and restarted, the etcd leader killed, a majority of
// members stopped, compaction, defragmentation. At the end it checks the
// record of every client against etcd's own history of the keys: no
// acknowledged write lost, no watch event lost, duplicated or reordered,
// every informer converged, no resourceVersion going backwards.
//
// `go test ./test/chaos` runs a short schedule (-short a shorter one);
// hack/chaos.sh runs it for longer (-chaos.duration).
package chaos
