package app

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
)

// MiscOptions are kube's flags of smaller parts of the server, each with
// kube's meaning.
type MiscOptions struct {
	// LeaseReuseDuration is --lease-reuse-duration-seconds: how long one
	// etcd lease serves the keys created with one TTL (events).
	LeaseReuseDuration time.Duration
	// StorageInitializationTimeout is --storage-initialization-timeout:
	// how long /readyz waits for the watch caches' first lists; past it
	// the check passes (logged), as kube's storage readiness hook gives up.
	StorageInitializationTimeout time.Duration
	// ContentionProfiling is --contention-profiling: with --profiling,
	// goroutine blocking events are recorded (/debug/pprof/block).
	ContentionProfiling bool

	noOps map[string]*noOpValue
}

func defaultMiscOptions() MiscOptions {
	return MiscOptions{LeaseReuseDuration: etcd3.DefaultLeaseReuse, StorageInitializationTimeout: time.Minute,
		noOps: map[string]*noOpValue{}}
}

func (o *MiscOptions) addFlags(fs *pflag.FlagSet) {
	fs.Var(secondsValue{&o.LeaseReuseDuration}, "lease-reuse-duration-seconds",
		"The time in seconds that each lease is reused. A lower value could avoid large number of objects reusing the same lease. Notice that a too small value may cause performance problems at storage layer.")
	fs.DurationVar(&o.StorageInitializationTimeout, "storage-initialization-timeout", o.StorageInitializationTimeout,
		"Maximum amount of time to wait for storage initialization (the watch caches' first lists) before declaring apiserver ready.")
	fs.BoolVar(&o.ContentionProfiling, "contention-profiling", o.ContentionProfiling, "Enable block profiling, if profiling is enabled")
	for _, f := range kubeNoOpFlags {
		v := &noOpValue{typ: f.typ, value: f.def}
		o.noOps[f.name] = v
		fs.Var(v, f.name, f.usage)
		fs.Lookup(f.name).DefValue = f.def
		if f.deprecated != "" {
			_ = fs.MarkDeprecated(f.name, f.deprecated)
		}
	}
}

func (o *MiscOptions) validate() error {
	if o.LeaseReuseDuration < time.Second {
		return fmt.Errorf("--lease-reuse-duration-seconds should be a positive number, but value '%d' provided", int64(o.LeaseReuseDuration/time.Second))
	}
	if o.StorageInitializationTimeout < 0 {
		return fmt.Errorf("--storage-initialization-timeout can not be negative value")
	}
	return nil
}

// applyProfiling turns block profiling on when the flags ask, as kube
// does when it installs its profiling handlers. It is process-wide.
func (o *MiscOptions) applyProfiling(profiling bool) {
	if profiling && o.ContentionProfiling {
		runtime.SetBlockProfileRate(1)
	}
}

// watchCacheCheck is ready once every resource's store is (each watch
// cache has its first list), or once timeout has passed since it was
// built (--storage-initialization-timeout: kube's storage readiness hook
// stops waiting then, and so does this check, logging it once).
func watchCacheCheck(groups []rest.APIGroupInfo, timeout time.Duration) healthz.Check {
	var checks []rest.StorageReadinessChecker
	for i := range groups {
		checks = append(checks, groups[i].StorageReadinessCheckers()...)
	}
	deadline := time.Now().Add(timeout)
	var gaveUp sync.Once
	return healthz.Check{Name: "watch-cache", Fn: func(context.Context) error {
		for _, check := range checks {
			if err := check.StorageReadiness(); err != nil {
				if time.Now().After(deadline) {
					gaveUp.Do(func() {
						slog.Warn("--storage-initialization-timeout passed while waiting for the watch caches; ready anyway", "err", err)
					})
					return nil
				}
				return err
			}
		}
		return nil
	}}
}

// kubeNoOpFlags are flags kube-apiserver 1.37 parses and does nothing
// with: they are taken here too (any valid value), doing as little.
var kubeNoOpFlags = []struct {
	name, typ, def, usage, deprecated string
}{
	{"default-watch-cache-size", "int", "100", "Default watch cache size. Ignored, as by kube: watch caches are sized automatically.",
		"Watch caches are sized automatically. This flag is no-op and it will be removed in a future version."},
	{"kubelet-read-only-port", "uint", "10255", "DEPRECATED: kubelet read only port. Ignored, as by kube: the read-only port is never used.",
		"kubelet-read-only-port is deprecated and will be removed."},
	{"etcd-db-metric-poll-interval", "duration", "30s",
		"The interval of requests to poll etcd and update metric. Ignored, as by kube 1.37, whose etcd database size metric is read when scraped.", ""},
}

// noOpValue is the value of a flag of kubeNoOpFlags: parsed as kube parses
// it (so a typo fails as in kube), then ignored.
type noOpValue struct{ typ, value string }

func (v *noOpValue) String() string { return v.value }
func (v *noOpValue) Type() string   { return v.typ }

func (v *noOpValue) Set(s string) error {
	var err error
	switch v.typ {
	case "int":
		_, err = strconv.ParseInt(s, 0, 64)
	case "uint":
		_, err = strconv.ParseUint(s, 0, 64)
	case "duration":
		_, err = time.ParseDuration(s)
	}
	if err != nil {
		return err
	}
	v.value = s
	return nil
}
