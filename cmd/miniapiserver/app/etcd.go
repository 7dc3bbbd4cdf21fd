package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

// EtcdName is the name under which the binary acts as etcd: envtest (and
// anything else that expects an etcd binary beside kube-apiserver) runs
// a copy or symlink of miniapiserver called etcd.
const EtcdName = "etcd"

// IsEtcd reports whether the process was started as etcd (the base name
// of argv[0], without a Windows .exe).
func IsEtcd(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == EtcdName
}

// RunEtcd runs etcd's own main (go.etcd.io/etcd/server/v3/etcdmain, the
// one the etcd release binary runs, over the same embed package as the
// embedded etcd): every etcd flag and environment variable, /health,
// --help and the exit on SIGTERM are etcd's. It does not return.
//
// One default differs: a single member (no --initial-cluster) that is
// given no election timing gets the embedded etcd's (10 ms heartbeats,
// 100 ms elections), which makes it leader, and ready, in about a third
// of the time etcd's 100 ms / 1 s take: most of an envtest etcd's start.
func RunEtcd() {
	if !etcdSetAnywhere("initial-cluster", "heartbeat-interval", "election-timeout") {
		os.Setenv("ETCD_HEARTBEAT_INTERVAL", "10")
		os.Setenv("ETCD_ELECTION_TIMEOUT", "100")
	}
	etcdmain.Main(os.Args)
	os.Exit(0)
}

// etcdSetAnywhere reports whether any of flags is given on the command
// line (-flag or --flag, with or without =value) or by its ETCD_
// environment variable.
func etcdSetAnywhere(flags ...string) bool {
	for _, f := range flags {
		if _, ok := os.LookupEnv("ETCD_" + strings.ToUpper(strings.ReplaceAll(f, "-", "_"))); ok {
			return true
		}
		if slices.ContainsFunc(os.Args[1:], func(arg string) bool {
			name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
			return strings.HasPrefix(arg, "-") && name == f
		}) {
			return true
		}
	}
	return false
}
