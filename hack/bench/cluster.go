package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The cluster scenario loads a server as a cluster of --nodes kubelets
// and a few controllers would (kwok's "1,000 nodes and 100,000 pods"
// shape): nodes registered with a status, a Lease per node renewed every
// --lease-period and a node status patch every --node-status-period
// (kubelet cadences, spread evenly), --pods-per-node pods per node created,
// bound and moved to Running through the API, one watch of its pods per
// node (fieldSelector=spec.nodeName, from a LIST's resourceVersion, as a
// kubelet), --informers all-pods informers (paged LIST, then WATCH), and
// pod churn (--churn-per-sec deletes, each followed by a new pod) for
// --duration. It reports latencies per verb, the node watches' delivery
// latency, LISTs of all pods, the server's (and etcd's) RSS and CPU
// seconds, and what the watchers lost, reordered or had cut.

const (
	clusterLabel  = "bench-cluster"
	leaseNS       = "kube-node-lease"
	podsPath      = "/api/v1/pods"
	leaseDuration = 40
)

func nodeName(i int) string { return "bench-node-" + strconv.Itoa(i) }
func podName(i int) string  { return "bench-pod-" + strconv.Itoa(i) }

func leasesPath() string { return "/apis/coordination.k8s.io/v1/namespaces/" + leaseNS + "/leases" }

func nodeJSON(i int) []byte {
	return []byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"` + nodeName(i) + `","labels":{"` + clusterLabel +
		`":"true","kubernetes.io/hostname":"` + nodeName(i) + `"}},"spec":{"podCIDR":"10.` + strconv.Itoa(i/250%250) + `.` +
		strconv.Itoa(i%250) + `.0/24"}}`)
}

// nodeStatusJSON is a kubelet's status heartbeat: Ready, capacity, and
// the heartbeat time.
func nodeStatusJSON(now time.Time) []byte {
	t := now.UTC().Format(time.RFC3339)
	return []byte(`{"status":{"capacity":{"cpu":"32","memory":"256Gi","pods":"110"},"allocatable":{"cpu":"31","memory":"250Gi","pods":"110"},` +
		`"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status",` +
		`"lastHeartbeatTime":"` + t + `","lastTransitionTime":"` + t + `"}],"nodeInfo":{"kubeletVersion":"v1.37.2"}}}`)
}

func leaseJSON(i int, rv string, now time.Time) []byte {
	return []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"` + nodeName(i) + `","namespace":"` + leaseNS +
		`","resourceVersion":"` + rv + `","labels":{"` + clusterLabel + `":"true"}},"spec":{"holderIdentity":"` + nodeName(i) +
		`","leaseDurationSeconds":` + strconv.Itoa(leaseDuration) + `,"renewTime":"` + now.UTC().Format("2006-01-02T15:04:05.000000Z") + `"}}`)
}

// podJSON is a pod of about size bytes: a realistic spec (resources,
// probes, environment) padded by environment variables.
func podJSON(ns string, i, size int) []byte {
	var env strings.Builder
	for k := 0; env.Len() < size-1500; k++ {
		fmt.Fprintf(&env, `{"name":"SETTING_%d","value":"%s"},`, k, payload(i+k, 48))
	}
	return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + podName(i) + `","namespace":"` + ns + `","labels":{"app":"bench-` +
		strconv.Itoa(i%50) + `","` + clusterLabel + `":"true"}},"spec":{"containers":[{"name":"app","image":"registry.example/app:1.0",` +
		`"ports":[{"containerPort":8080,"protocol":"TCP"}],"env":[` + strings.TrimSuffix(env.String(), ",") + `],` +
		`"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"1","memory":"512Mi"}},` +
		`"readinessProbe":{"httpGet":{"path":"/healthz","port":8080},"periodSeconds":10},` +
		`"livenessProbe":{"httpGet":{"path":"/healthz","port":8080},"periodSeconds":10}}],"terminationGracePeriodSeconds":0}}`)
}

func bindingJSON(ns string, pod, node int) []byte {
	return []byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"` + podName(pod) + `","namespace":"` + ns +
		`"},"target":{"apiVersion":"v1","kind":"Node","name":"` + nodeName(node) + `"}}`)
}

func podRunningJSON(i int, now time.Time) []byte {
	t := now.UTC().Format(time.RFC3339)
	return []byte(`{"status":{"phase":"Running","podIP":"10.` + strconv.Itoa(100+i/65536%100) + `.` + strconv.Itoa(i/256%256) + `.` +
		strconv.Itoa(i%256) + `","startTime":"` + t + `","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"` + t + `"}],` +
		`"containerStatuses":[{"name":"app","ready":true,"restartCount":0,"image":"registry.example/app:1.0","imageID":"","started":true,` +
		`"state":{"running":{"startedAt":"` + t + `"}}}]}}`)
}

// clusterOps are the latencies of each kind of request.
type clusterOps struct {
	mu   sync.Mutex
	lat  map[string][]time.Duration
	errs map[string]*errorSamples
}

func (o *clusterOps) do(ctx context.Context, c *Client, op, method, path string, body []byte, contentType string) (Response, error) {
	t0 := time.Now()
	resp, err := c.Do(ctx, method, path, nil, body, contentType, method == http.MethodPost || method == http.MethodPut)
	d := time.Since(t0)
	if ctx.Err() != nil {
		return resp, err
	}
	if err != nil {
		o.fail(op, err)
		return resp, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lat[op] = append(o.lat[op], d)
	return resp, nil
}

// fail counts a failed request of kind op.
func (o *clusterOps) fail(op string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.errs[op] == nil {
		o.errs[op] = &errorSamples{}
	}
	o.errs[op].add(err)
}

func (o *clusterOps) fields() Fields {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := Fields{}
	for op, lat := range o.lat {
		f.add(Summarize(lat).Fields(op + "_"))
	}
	for op, e := range o.errs {
		for k, v := range e.fields() {
			f[op+"_"+k] = v
		}
	}
	return f
}

// cluster is one run of the scenario.
type cluster struct {
	*Bench
	c   *Client
	ops clusterOps
	// leaseRV is the resourceVersion of each node's lease (its one writer
	// keeps it, as a kubelet does).
	leaseRV []string
	// bound holds when each pod's binding was sent, for the delivery
	// latency of the node watches.
	bound    sync.Map // pod name -> time.Time
	delivery struct {
		sync.Mutex
		lat []time.Duration
	}
}

// placePod creates pod i, binds it to its node and marks it Running.
func (cl *cluster) placePod(ctx context.Context, i int) error {
	ns := cl.Namespace
	if _, err := cl.ops.do(ctx, cl.c, "pod_create", http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", podJSON(ns, i, cl.PodSize), "application/json"); err != nil {
		return err
	}
	cl.bound.Store(podName(i), time.Now())
	if _, err := cl.ops.do(ctx, cl.c, "pod_bind", http.MethodPost, "/api/v1/namespaces/"+ns+"/pods/"+podName(i)+"/binding",
		bindingJSON(ns, i, i%cl.Nodes), "application/json"); err != nil {
		return err
	}
	_, err := cl.ops.do(ctx, cl.c, "pod_status_patch", http.MethodPatch, "/api/v1/namespaces/"+ns+"/pods/"+podName(i)+"/status",
		podRunningJSON(i, time.Now()), "application/strategic-merge-patch+json")
	return err
}

// renewLease renews node i's lease as its kubelet does: an update at the
// resourceVersion it last wrote, read again after a conflict.
func (cl *cluster) renewLease(ctx context.Context, i int) error {
	resp, err := cl.ops.do(ctx, cl.c, "lease_put", http.MethodPut, leasesPath()+"/"+nodeName(i), leaseJSON(i, cl.leaseRV[i], time.Now()), "application/json")
	if isStatus(err, http.StatusConflict) {
		resp, err = cl.c.Do(ctx, http.MethodGet, leasesPath()+"/"+nodeName(i), nil, nil, "", true)
	}
	if err != nil {
		return err
	}
	rv, err := resourceVersionOf(resp.Body)
	cl.leaseRV[i] = rv
	return err
}

// onNodeEvent records the delivery latency of a pod's binding to its
// node's watch.
func (cl *cluster) onNodeEvent(ev *podEvent, recv time.Time) {
	if ev.Type != "ADDED" {
		return
	}
	if sent, ok := cl.bound.LoadAndDelete(ev.Object.Metadata.Name); ok {
		cl.delivery.Lock()
		cl.delivery.lat = append(cl.delivery.lat, recv.Sub(sent.(time.Time)))
		cl.delivery.Unlock()
	}
}

// startFollowers opens a watch per node and the informers, and waits until
// each has listed.
func (cl *cluster) startFollowers(ctx context.Context) (nodes, informers []*follower, wait func()) {
	var wg, synced sync.WaitGroup
	start := func(f *follower) {
		synced.Add(1)
		wg.Go(func() { f.run(ctx, synced.Done) })
	}
	for i := range cl.Nodes {
		f := newFollower(cl.c, podsPath, url.Values{"fieldSelector": {"spec.nodeName=" + nodeName(i)}}, 0, cl.Deadline)
		f.onEvent = cl.onNodeEvent
		nodes = append(nodes, f)
		start(f)
	}
	for range cl.Informers {
		f := newFollower(cl.c, podsPath, nil, cl.PageSize, cl.Deadline)
		informers = append(informers, f)
		start(f)
	}
	synced.Wait()
	return nodes, informers, wg.Wait
}
