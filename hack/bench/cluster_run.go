package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runCluster runs the cluster scenario (see cluster.go).
func runCluster(ctx context.Context, b *Bench) (Result, error) {
	c, err := b.Client()
	if err != nil {
		return Result{}, err
	}
	cl := &cluster{Bench: b, c: c, leaseRV: make([]string, b.Nodes)}
	cl.ops.lat, cl.ops.errs = map[string][]time.Duration{}, map[string]*errorSamples{}
	if err := c.ensureNamespace(ctx, b.Namespace); err != nil {
		return Result{}, err
	}
	if err := c.ensureDefaultServiceAccount(ctx, b.Namespace); err != nil {
		return Result{}, err
	}
	cpu0, etcdCPU0 := procCPU(b.PID), procCPU(b.EtcdPID)
	t0 := time.Now()
	if err := cl.registerNodes(ctx); err != nil {
		return Result{}, err
	}
	registered := time.Since(t0)

	fctx, stopFollowers := context.WithCancel(ctx)
	defer stopFollowers()
	nodes, informers, waitFollowers := cl.startFollowers(fctx)
	synced := time.Since(t0) - registered

	pods := b.Nodes * b.PodsPerNode
	place := runWorkers(ctx, b.Concurrency, pods, cl.placePod)
	if place.errs.count > 0 {
		return Result{}, fmt.Errorf("placing pods: %d errors, e.g. %v", place.errs.count, place.errs.samples)
	}
	steady := cl.steady(ctx, pods)
	lost, err := converge(ctx, c, append(nodes, informers...), 60*time.Second)
	if err != nil {
		return Result{}, fmt.Errorf("reading the final state: %w", err)
	}
	stopFollowers()
	waitFollowers()

	r := b.result("cluster", Fields{"nodes": b.Nodes, "pods_per_node": b.PodsPerNode, "pod_size_bytes": b.PodSize, "informers": b.Informers,
		"churn_per_sec": b.ChurnPerSec, "lease_period_s": b.LeasePeriod.Seconds(), "node_status_period_s": b.NodeStatusPeriod.Seconds(),
		"steady_s": b.Duration.Seconds(), "concurrency": b.Concurrency})
	r.Fields["register_nodes_ms"] = ms(registered)
	r.Fields["followers_synced_ms"] = ms(synced)
	r.Fields["pods_placed_per_sec"] = perSec(place.ok, place.elapsed)
	r.Fields.add(cl.ops.fields())
	r.Fields.add(steady)
	cl.delivery.Lock()
	r.Fields.add(Summarize(cl.delivery.lat).Fields("node_watch_delivery_"))
	cl.delivery.Unlock()
	var ns, inf followerStats
	for _, f := range nodes {
		ns.add(f)
	}
	for _, f := range informers {
		inf.add(f)
	}
	r.Fields.add(ns.fields("node_watch_"))
	r.Fields.add(inf.fields("informer_"))
	r.Fields["objects_lost"] = lost
	if b.PID > 0 {
		r.Fields["server_cpu_s"] = procCPU(b.PID) - cpu0
		if m, err := readProcMemory(b.PID); err == nil {
			r.Fields["server_rss_bytes"], r.Fields["server_hwm_bytes"] = m.RSS, m.HWM
		}
	}
	if b.EtcdPID > 0 {
		r.Fields["etcd_cpu_s"] = procCPU(b.EtcdPID) - etcdCPU0
		if m, err := readProcMemory(b.EtcdPID); err == nil {
			r.Fields["etcd_rss_bytes"] = m.RSS
		}
	}
	// The run is measured: a cleanup that fails (deleting 100,000 pods
	// may take longer than a request may) is reported with it, not
	// instead of it.
	if b.SkipCleanup {
		return r, nil
	}
	began := time.Now()
	if err := cl.cleanup(ctx); err != nil {
		r.Fields["cleanup_error"] = err.Error()
	}
	r.Fields["cleanup_ms"] = ms(time.Since(began))
	return r, nil
}

// registerNodes creates the nodes with their status and leases.
func (cl *cluster) registerNodes(ctx context.Context) error {
	run := runWorkers(ctx, cl.Concurrency, cl.Nodes, func(ctx context.Context, i int) error {
		_, err := cl.ops.do(ctx, cl.c, "node_create", http.MethodPost, "/api/v1/nodes", nodeJSON(i), "application/json")
		if err != nil && !isStatus(err, http.StatusConflict) {
			return err
		}
		if _, err := cl.ops.do(ctx, cl.c, "node_status_patch", http.MethodPatch, "/api/v1/nodes/"+nodeName(i)+"/status",
			nodeStatusJSON(time.Now()), "application/strategic-merge-patch+json"); err != nil {
			return err
		}
		resp, err := cl.ops.do(ctx, cl.c, "lease_create", http.MethodPost, leasesPath(), leaseJSON(i, "", time.Now()), "application/json")
		if isStatus(err, http.StatusConflict) {
			resp, err = cl.c.Do(ctx, http.MethodGet, leasesPath()+"/"+nodeName(i), nil, nil, "", true)
		}
		if err != nil {
			return err
		}
		cl.leaseRV[i], err = resourceVersionOf(resp.Body)
		return err
	})
	if run.errs.count > 0 {
		return fmt.Errorf("registering nodes: %d errors, e.g. %v", run.errs.count, run.errs.samples)
	}
	return ctx.Err()
}

// steady runs the kubelets' heartbeats, the pod churn and LISTs of all
// pods for --duration, and returns the LISTs' latencies and how many pods
// churned.
func (cl *cluster) steady(ctx context.Context, pods int) Fields {
	sctx, cancel := context.WithTimeout(ctx, cl.Duration)
	defer cancel()
	var wg sync.WaitGroup
	if cl.CPUProfile != "" {
		wg.Go(func() {
			if err := cl.saveCPUProfile(sctx); err != nil {
				cl.ops.fail("cpu_profile", err)
			}
		})
	}
	// Each node renews its lease every lease period, and patches its
	// status every status period, at an offset of its own.
	// A node whose previous heartbeat is still in flight skips one, as a
	// kubelet's loop would be late: one writer per object.
	heartbeat := func(period time.Duration, op func(ctx context.Context, i int) error) {
		busy := make([]atomic.Bool, cl.Nodes)
		wg.Go(func() {
			start := time.Now()
			sem := make(chan struct{}, cl.Concurrency)
			for n := 0; sctx.Err() == nil; n++ {
				i := n % cl.Nodes
				at := start.Add(time.Duration(n) * period / time.Duration(cl.Nodes))
				if !sleepUntil(sctx, at) {
					break
				}
				if !busy[i].CompareAndSwap(false, true) {
					continue
				}
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem; busy[i].Store(false) }()
					_ = op(sctx, i)
				})
			}
		})
	}
	heartbeat(cl.LeasePeriod, cl.renewLease)
	heartbeat(cl.NodeStatusPeriod, func(ctx context.Context, i int) error {
		_, err := cl.ops.do(ctx, cl.c, "node_status_patch", http.MethodPatch, "/api/v1/nodes/"+nodeName(i)+"/status",
			nodeStatusJSON(time.Now()), "application/strategic-merge-patch+json")
		return err
	})
	// Churn: the oldest pod goes, a new one takes its place.
	var churned atomic.Int64
	if cl.ChurnPerSec > 0 {
		wg.Go(func() {
			tick := time.NewTicker(time.Duration(float64(time.Second) / cl.ChurnPerSec))
			defer tick.Stop()
			for n := 0; n < pods; n++ { // each of the first pods goes at most once
				select {
				case <-sctx.Done():
					return
				case <-tick.C:
				}
				// Started within the phase, finished after it if need be.
				wg.Go(func() {
					path := "/api/v1/namespaces/" + cl.Namespace + "/pods/" + podName(n)
					if _, err := cl.ops.do(ctx, cl.c, "pod_delete", http.MethodDelete, path, nil, ""); err != nil {
						return
					}
					if cl.placePod(ctx, pods+n) == nil {
						churned.Add(1)
					}
				})
			}
		})
	}
	// A controller's LISTs of all pods: paged from etcd, and from the
	// cache (resourceVersion=0), one of each every 10 seconds.
	var paged, cached []time.Duration
	wg.Go(func() {
		for sctx.Err() == nil {
			for _, q := range []url.Values{{"limit": {strconv.Itoa(cl.PageSize)}}, {"resourceVersion": {"0"}}} {
				t0 := time.Now()
				if _, _, err := listPods(sctx, cl.c, podsPath, q, 0); err != nil {
					if sctx.Err() == nil {
						op := map[bool]string{true: "list_all_pods_paged", false: "list_all_pods_rv0"}[q.Has("limit")]
						cl.ops.fail(op, err)
					}
					continue
				}
				if q.Has("limit") {
					paged = append(paged, time.Since(t0))
				} else {
					cached = append(cached, time.Since(t0))
				}
			}
			sleepUntil(sctx, time.Now().Add(10*time.Second))
		}
	})
	wg.Wait()
	f := Summarize(paged).Fields("list_all_pods_paged_")
	f.add(Summarize(cached).Fields("list_all_pods_rv0_"))
	f["pods_churned"] = churned.Load()
	return f
}

// saveCPUProfile saves the server's CPU profile of the steady phase (all
// of it but its last seconds, so that the profile is back before the
// phase ends) to --cpu-profile, then its heap profile (what is live then)
// beside it, with the suffix .heap.
func (cl *cluster) saveCPUProfile(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	seconds := max(1, int(cl.Duration.Seconds())-3)
	if err := cl.saveProfile(ctx, "/debug/pprof/profile", url.Values{"seconds": {strconv.Itoa(seconds)}}, cl.CPUProfile); err != nil {
		return err
	}
	return cl.saveProfile(ctx, "/debug/pprof/heap", nil, cl.CPUProfile+".heap")
}

func (cl *cluster) saveProfile(ctx context.Context, path string, q url.Values, file string) error {
	resp, err := cl.c.Stream(ctx, path, q)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// cleanup deletes what the scenario created.
func (cl *cluster) cleanup(ctx context.Context) error {
	sel := url.Values{"labelSelector": {clusterLabel + "=true"}}
	for _, path := range []string{"/api/v1/namespaces/" + cl.Namespace + "/pods", "/api/v1/nodes", leasesPath()} {
		if _, err := cl.c.Do(ctx, http.MethodDelete, path, sel, nil, "", false); err != nil {
			return fmt.Errorf("cleaning up %s: %w", path, err)
		}
	}
	return nil
}

// sleepUntil waits until t, or until ctx ends (false).
func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}

// resourceVersionOf reads metadata.resourceVersion of an object's JSON.
func resourceVersionOf(body []byte) (string, error) {
	var o struct {
		Metadata objectMeta `json:"metadata"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&o); err != nil || o.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("no resourceVersion in %.100s", body)
	}
	return o.Metadata.ResourceVersion, nil
}

// procCPU is the CPU seconds (user and system) pid has used (0 without
// one).
func procCPU(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / clockTicks
}

// clockTicks is the kernel's USER_HZ, 100 on every Linux we run on.
const clockTicks = 100
