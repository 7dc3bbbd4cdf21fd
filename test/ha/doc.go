// Package ha tests miniapiserver run as several replicas over a 3-member
// etcd cluster, as kube-apiserver is run for high availability: writes
// through any replica are seen in one order by watchers of every replica,
// consistent reads are never stale, the allocators never hand out one
// address twice, the kubernetes Service lists the live replicas, and
// writes resume after the etcd leader is killed. The etcd members and the
// replicas run inside the test binary on loopback ports.
package ha
