// Package apf tests API Priority and Fairness through the HTTP API:
// classification, fairness within a level, exemption, the 429s, the
// dumps and the metrics.
package apf

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
)

var alwaysAllow = testserver.WithAuthorizer(authz.ModeAlwaysAllow.Name(), authz.AlwaysAllow{})

const (
	fsHeader = "X-Kubernetes-PF-FlowSchema-UID"
	plHeader = "X-Kubernetes-PF-PriorityLevel-UID"
)

func httpClientOf(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestClassification: each response names, by UID, the flow schema and
// priority level of kube's bootstrap configuration its request matched.
func TestClassification(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, alwaysAllow)
	fc := kubernetes.NewForConfigOrDie(ts.ClientConfig).FlowcontrolV1()
	for _, tc := range []struct {
		name        string
		user        string
		groups      []string
		path        string
		schema, lvl string
	}{
		{"an administrator is exempt", "admin", []string{"system:masters"}, "/api/v1/namespaces", "exempt", "exempt"},
		{"a user is global-default", "jane", []string{"dev"}, "/api/v1/namespaces/default/configmaps", "global-default", "global-default"},
		{"kcm's lease is leader election", "system:kube-controller-manager", nil,
			"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager", "system-leader-election", "leader-election"},
		{"kcm's other reads are workload-high", "system:kube-controller-manager", nil, "/api/v1/pods", "kube-controller-manager", "workload-high"},
		{"a service account is workload-low", "system:serviceaccount:default:builder", []string{"system:serviceaccounts"},
			"/api/v1/namespaces/default/pods", "service-accounts", "workload-low"},
		{"a node's status is node-high", "system:node:n1", []string{"system:nodes"}, "/api/v1/nodes/n1/status", "system-node-high", "node-high"},
		{"a node's other reads are system", "system:node:n1", []string{"system:nodes"}, "/api/v1/namespaces/default/pods", "system-nodes", "system"},
		{"probes are exempt", "nobody", nil, "/readyz", "probes", "exempt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := fc.FlowSchemas().Get(context.Background(), tc.schema, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pl, err := fc.PriorityLevelConfigurations().Get(context.Background(), tc.lvl, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			resp, _ := get(t, httpClientOf(t, ts.ClientConfigFor(t, tc.user, tc.groups...)), ts.URL+tc.path)
			if got := resp.Header.Get(fsHeader); got != string(fs.UID) {
				t.Errorf("%s %s, want %s (%s)", fsHeader, got, fs.UID, tc.schema)
			}
			if got := resp.Header.Get(plHeader); got != string(pl.UID) {
				t.Errorf("%s %s, want %s (%s)", plHeader, got, pl.UID, tc.lvl)
			}
		})
	}
}

// tinyLevel is a level of one seat (lending and borrowing none) with
// queues of 5, for the group tenants, one flow per user.
func tinyLevel(t *testing.T, cs kubernetes.Interface) *flowcontrolv1.FlowSchema {
	t.Helper()
	ctx := context.Background()
	_, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1), LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 32, HandSize: 2, QueueLengthLimit: 5}},
			}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "tiny"},
			MatchingPrecedence:         100,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "tenants"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// waitForSchema waits until c's requests are classified in fs.
func waitForSchema(t *testing.T, c *http.Client, url string, fs *flowcontrolv1.FlowSchema) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, _ := get(t, c, url)
		if resp.Header.Get(fsHeader) == string(fs.UID) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests still classified in %s, not %s", resp.Header.Get(fsHeader), fs.UID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFairness floods a level of one seat from one user: the flood
// queues, overflows its queues and gets kube's 429s, while another user
// of the same level is served every time (its own queue takes turns with
// the flood's), and administrators (exempt) are never refused.
func TestFairness(t *testing.T) {
	t.Parallel()
	// 200 seats: the tiny level's share (1 of ~246) is 1 seat.
	ts := testserver.Start(t, alwaysAllow, func(o *app.Options) {
		o.Auth.MaxRequestsInflight, o.Auth.MaxMutatingRequestsInflight = 100, 100
	})
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	fs := tinyLevel(t, cs)
	for i := range 100 { // lists worth waiting for
		_, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i)}, Data: map[string]string{"k": strings.Repeat("v", 1000)},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	url := ts.URL + "/api/v1/namespaces/default/configmaps"
	noisy, quiet := httpClientOf(t, ts.ClientConfigFor(t, "noisy", "tenants")), httpClientOf(t, ts.ClientConfigFor(t, "quiet", "tenants"))
	admin := ts.HTTPClient(t)
	waitForSchema(t, noisy, url, fs)
	waitForSchema(t, quiet, url, fs)

	var tooMany, goodRetry, served atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, body := get(t, noisy, url)
				switch resp.StatusCode {
				case http.StatusTooManyRequests:
					tooMany.Add(1)
					if resp.Header.Get("Retry-After") != "" && body == "Too many requests, please try again later.\n" &&
						resp.Header.Get(fsHeader) == string(fs.UID) {
						goodRetry.Add(1)
					}
				case http.StatusOK:
					served.Add(1)
				default:
					t.Errorf("the flood got %d: %s", resp.StatusCode, body)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // the flood's queues fill
	quietFailures, adminFailures := 0, 0
	for range 20 {
		if resp, body := get(t, quiet, url); resp.StatusCode != http.StatusOK {
			quietFailures++
			t.Logf("the quiet user got %d: %s", resp.StatusCode, body)
		}
		if resp, _ := get(t, admin, url); resp.StatusCode != http.StatusOK {
			adminFailures++
		}
	}
	_, queues := get(t, admin, ts.URL+"/debug/api_priority_and_fairness/dump_queues")
	t.Logf("the flood: %d served, %d refused", served.Load(), tooMany.Load())
	close(stop)
	wg.Wait()
	if quietFailures > 0 || adminFailures > 0 {
		t.Errorf("during the flood %d of 20 reads of the other user and %d of 20 of an administrator failed", quietFailures, adminFailures)
	}
	if tooMany.Load() == 0 || goodRetry.Load() != tooMany.Load() || served.Load() == 0 {
		t.Errorf("the flood: %d served, %d 429s (%d with kube's body, Retry-After and classification)", served.Load(), tooMany.Load(), goodRetry.Load())
	}
	if !strings.Contains(queues, "tiny,") {
		t.Errorf("dump_queues has no queue of tiny:\n%s", queues)
	}
	_, metrics := get(t, admin, ts.URL+"/metrics")
	for _, want := range []string{
		`apiserver_flowcontrol_rejected_requests_total{flow_schema="tiny",priority_level="tiny",reason="queue-full"}`,
		`apiserver_flowcontrol_dispatched_requests_total{flow_schema="tiny",priority_level="tiny"}`,
		`apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="tiny",priority_level="tiny",le="0"}`,
		`apiserver_flowcontrol_nominal_limit_seats{priority_level="tiny"} 1`,
		`apiserver_flowcontrol_current_limit_seats{priority_level="tiny"} 1`,
		`apiserver_flowcontrol_current_executing_seats{flow_schema="exempt",priority_level="exempt"}`,
		`apiserver_flowcontrol_current_inqueue_requests{flow_schema="tiny",priority_level="tiny"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestDumps: kube's three dumps, in its format.
func TestDumps(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, alwaysAllow)
	admin := ts.HTTPClient(t)
	for _, tc := range []struct{ path, header, row string }{
		{"dump_priority_levels", "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests",
			"\nworkload-low,      0,            true,   false,       0,               0"},
		{"dump_queues", "PriorityLevelName, Index,  PendingRequests, ExecutingRequests, SeatsInUse, NextDispatchR,",
			"\nglobal-default,    0,      0,               0,                 0,          0.00000000ss,"},
		{"dump_requests", "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime,", ""},
		{"dump_requests?includeRequestDetails=1", "AdditionalLatency, UserName,", ""},
	} {
		resp, body := get(t, admin, ts.URL+"/debug/api_priority_and_fairness/"+tc.path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, tc.header) || !strings.Contains(body, tc.row) {
			t.Errorf("%s: %d\n%s\nwant the header %q and the row %q", tc.path, resp.StatusCode, body, tc.header, tc.row)
		}
	}
	// Authorized as kube's non-resource URLs: a user without a role is
	// forbidden.
	rbac := testserver.Start(t)
	resp, _ := get(t, httpClientOf(t, rbac.ClientConfigFor(t, "jane")), rbac.URL+"/debug/api_priority_and_fairness/dump_queues")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a user without a role: %d, want 403", resp.StatusCode)
	}
}
