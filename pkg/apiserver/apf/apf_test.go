package apf

import (
	"context"
	"math"
	"net/url"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf/queueset"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// bootstrapController has kube's whole bootstrap configuration at 600
// seats (kube's default).
func bootstrapController() *Controller {
	c := New(Config{ServerConcurrencyLimit: 600})
	c.apply(append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...),
		append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...))
	return c
}

func TestClassify(t *testing.T) {
	c := bootstrapController()
	res := func(verb, group, resource, ns string) *request.Info {
		return &request.Info{IsResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Namespace: ns}
	}
	for _, tc := range []struct {
		name       string
		user       user.Info
		info       *request.Info
		fs, flow   string
		exemptWant bool
	}{
		{"masters", &user.DefaultInfo{Name: "a", Groups: []string{"system:masters"}}, res("list", "", "pods", ""), "exempt", "", true},
		{"health probe", &user.DefaultInfo{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}, &request.Info{Verb: "get", Path: "/livez"}, "probes", "", true},
		// kube lists the probes exactly: their subpaths are ordinary requests.
		{"probe subpath", &user.DefaultInfo{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}, &request.Info{Verb: "get", Path: "/readyz/etcd"}, "global-default", "system:anonymous", false},
		{"kcm lease", &user.DefaultInfo{Name: "system:kube-controller-manager"}, res("update", "coordination.k8s.io", "leases", "kube-system"),
			"system-leader-election", "system:kube-controller-manager", false},
		{"kube-system service account's lease", &user.DefaultInfo{Name: "system:serviceaccount:kube-system:x"},
			res("get", "coordination.k8s.io", "leases", "kube-system"), "system-leader-election", "system:serviceaccount:kube-system:x", false},
		{"another namespace's service account", &user.DefaultInfo{Name: "system:serviceaccount:apps:x", Groups: []string{"system:serviceaccounts"}},
			res("get", "coordination.k8s.io", "leases", "kube-system"), "service-accounts", "system:serviceaccount:apps:x", false},
		{"authenticated user", &user.DefaultInfo{Name: "jane", Groups: []string{"system:authenticated"}}, res("list", "", "configmaps", "default"),
			"global-default", "jane", false},
		{"anonymous", &user.DefaultInfo{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}, res("list", "", "pods", ""),
			"global-default", "system:anonymous", false},
		{"no group", &user.DefaultInfo{Name: "x"}, res("list", "", "pods", ""), "catch-all", "x", false},
		{"node status subresource", &user.DefaultInfo{Name: "system:node:n", Groups: []string{"system:nodes"}},
			&request.Info{IsResourceRequest: true, Verb: "patch", Resource: "nodes", Subresource: "status", Name: "n"}, "system-node-high", "system:node:n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := c.classify(tc.user, tc.info)
			if cl.fs.Name != tc.fs || cl.flow != tc.flow || cl.exempt != tc.exemptWant {
				t.Errorf("got %s/%q (exempt %v), want %s/%q (exempt %v)", cl.fs.Name, cl.flow, cl.exempt, tc.fs, tc.flow, tc.exemptWant)
			}
		})
	}
}

func TestRuleMatching(t *testing.T) {
	rule := flowcontrolv1.ResourcePolicyRule{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"},
		Namespaces: []string{"a"}}
	info := &request.Info{IsResourceRequest: true, Verb: "get", APIGroup: "apps", Resource: "deployments", Subresource: "scale", Namespace: "a"}
	if !matchesResourceRule(rule, info) {
		t.Error("a listed subresource in a listed namespace does not match")
	}
	info.Namespace = ""
	if matchesResourceRule(rule, info) {
		t.Error("a cluster-scoped request matched a rule without clusterScope")
	}
	nr := flowcontrolv1.NonResourcePolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"/healthz", "/apis/*"}}
	for path, want := range map[string]bool{"/healthz": true, "/healthz/etcd": false, "/apis/": true, "/apis/x": true, "/api": false} {
		if got := matchesNonResourceRule(nr, &request.Info{Verb: "get", Path: path}); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}

func TestNominalLimits(t *testing.T) {
	c := bootstrapController()
	// kube's figures at 600 seats: shares of 245 in all; a level
	// without a borrowing limit may borrow the whole server.
	for name, want := range map[string]struct{ nominal, min, max, maxSeats int }{
		"leader-election": {25, 25, 625, 4},   // 10 shares, lends nothing, hand 4
		"workload-low":    {245, 24, 845, 37}, // 100 shares, lends 90%
		"global-default":  {49, 24, 649, 8},   // lends 50%
		"catch-all":       {13, 13, 613, 0},   // Reject: the estimator's bound
		"exempt":          {0, 0, 0, 0},
	} {
		lv := c.levels[name]
		if lv.nominal != want.nominal || lv.minCL != want.min || lv.maxCL != want.max || lv.maxSeats != want.maxSeats {
			t.Errorf("%s: nominal %d [%d, %d] max seats %d, want %+v", name, lv.nominal, lv.minCL, lv.maxCL, lv.maxSeats, want)
		}
	}
}

// TestBorrowing: a busy level borrows what idle ones lend, within its
// bounds; the limits add up to the server's.
func TestBorrowing(t *testing.T) {
	c := bootstrapController()
	busy := c.levels["workload-low"]
	// Demand far above the nominal limit: 800 seats waiting.
	held := make([]*queueset.Request, 0)
	r, err := busy.qs.Start(t.Context(), 1, queueset.Work{InitialSeats: busy.current}, queueset.Descr{})
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, r)
	ctx, cancel := context.WithCancel(t.Context())
	for i := range 8 {
		go busy.qs.Start(ctx, uint64(i), queueset.Work{InitialSeats: 100}, queueset.Descr{})
	}
	waitFor(t, func() bool { return busy.qs.Dump().Waiting == 8 })
	c.rebalance()
	if busy.current <= busy.nominal {
		t.Errorf("a busy level kept %d seats of a nominal %d while others idle", busy.current, busy.nominal)
	}
	sum := 0
	for name, lv := range c.levels {
		if lv.current < lv.minCL || lv.current > lv.maxCL {
			t.Errorf("%s: %d seats outside [%d, %d]", name, lv.current, lv.minCL, lv.maxCL)
		}
		sum += lv.current
	}
	if math.Abs(float64(sum-c.nominalSum)) > float64(len(c.levels)) {
		t.Errorf("the limits add up to %d, the server has %d", sum, c.nominalSum)
	}
	cancel()
	for _, r := range held {
		r.Finish()
	}
}

func TestEstimate(t *testing.T) {
	list := &request.Info{IsResourceRequest: true, Verb: "list", Resource: "configmaps"}
	stats := func(n, bytes int64, watchers int, found, ok bool) StatsFunc {
		return func(string, string) (storage.Stats, bool, bool) {
			return storage.Stats{ObjectCount: n, ObjectBytes: bytes, Watchers: watchers}, found, ok
		}
	}
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	for _, tc := range []struct {
		name     string
		info     *request.Info
		query    url.Values
		maxSeats int
		stats    StatsFunc
		want     queueset.Work
	}{
		{"a small list", list, nil, 0, stats(10, 10_000, 0, true, true), queueset.Work{InitialSeats: 1}},
		{"a big list from the cache is charged at most 1 MB", list, nil, 0, stats(10_000, 100_000_000, 0, true, true), queueset.Work{InitialSeats: 10}},
		{"a big list from etcd", list, q("limit=500&resourceVersion=5"), 0, stats(10_000, 100_000_000, 0, true, true), queueset.Work{InitialSeats: 50}},
		{"bounded by the level", list, q("continue=x"), 8, stats(10_000, 100_000_000, 0, true, true), queueset.Work{InitialSeats: 8}},
		{"an unknown count", list, nil, 0, stats(0, 0, 0, true, false), queueset.Work{InitialSeats: 10}},
		{"an aggregated resource", list, nil, 0, stats(0, 0, 0, false, false), queueset.Work{InitialSeats: 1}},
		{"a watch from a revision", &request.Info{IsResourceRequest: true, Verb: "watch", Resource: "pods"}, q("resourceVersion=7"), 0,
			stats(10_000, 100_000_000, 0, true, true), queueset.Work{InitialSeats: 1}},
		{"a write with few watchers", &request.Info{IsResourceRequest: true, Verb: "update", Resource: "pods"}, nil, 0,
			stats(1, 1, 9, true, true), queueset.Work{InitialSeats: 1}},
		{"a write with many watchers", &request.Info{IsResourceRequest: true, Verb: "create", Resource: "pods"}, nil, 0,
			stats(1, 1, 45, true, true), queueset.Work{InitialSeats: 1, FinalSeats: 5, AdditionalLatency: 5 * time.Millisecond}},
		{"a write with very many watchers is made longer", &request.Info{IsResourceRequest: true, Verb: "delete", Resource: "pods"}, nil, 0,
			stats(1, 1, 400, true, true), queueset.Work{InitialSeats: 1, FinalSeats: 10, AdditionalLatency: 20 * time.Millisecond}},
		{"a get", &request.Info{IsResourceRequest: true, Verb: "get", Resource: "pods"}, nil, 0, nil, queueset.Work{InitialSeats: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := estimate(tc.info, tc.query, tc.maxSeats, tc.stats); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	d := newDroppedTracker()
	now := time.Unix(1000, 0)
	for i := range 5 {
		if got := d.dropped("l", now); got != 1 {
			t.Fatalf("drop %d in the first second: Retry-After %d, want 1", i, got)
		}
	}
	// Five drops in the last second, at least 3 × 1: doubled.
	if got := d.dropped("l", now.Add(time.Second)); got != 2 {
		t.Errorf("after a second of 5 drops: %d, want 2", got)
	}
	// Quiet seconds bring it down by one.
	if got := d.dropped("l", now.Add(10*time.Second)); got != 1 {
		t.Errorf("after quiet seconds: %d, want 1", got)
	}
	if got := d.dropped("other", now); got != 1 {
		t.Errorf("another level: %d, want 1", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
