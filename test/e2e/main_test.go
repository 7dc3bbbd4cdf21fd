// Package e2e is the cluster test: the unmodified kube-controller-manager
// and kube-scheduler (built by hack/e2e-components.sh, folder in $E2E_BIN)
// run a small simulated cluster on miniapiserver, with a fake kubelet in
// the test for three nodes, and the test checks what a user of such a
// cluster sees: Deployments rolled out, scaled and updated, Jobs and
// CronJobs, Services' EndpointSlices, volumes bound, evictions against
// PodDisruptionBudgets, cascading and namespace deletion, CSRs signed,
// leader election, and neither component logging a resource it cannot
// find or an informer that cannot list or watch.
//
// With -reference (or E2E_REFERENCE=1) it runs the same against the
// reference kube-apiserver (/work/shared/reference-kube, binaries in
// $PEER_BIN), which proves the test itself.
//
//	hack/e2e.sh               # builds what it needs, runs against miniapiserver
//	hack/e2e.sh -reference    # against kube-apiserver
//
// TestConformance (conformance_test.go) starts the same cluster with kwok
// for nodes and runs Kubernetes' conformance suite on it: hack/conformance.sh.
//
// It is a Go module of its own so that the main module never requires
// k8s.io/kubernetes; the server is run as its binary (built from
// ../../cmd/miniapiserver, or $MINIAPISERVER), as users run it, rather
// than imported, which would also mix the server's dependency versions
// into the components' build.
package e2e

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var reference = goflag.Bool("reference", os.Getenv("E2E_REFERENCE") == "1",
	"run against the reference kube-apiserver ($REFERENCE_KUBE/start-kube.sh, binaries in $PEER_BIN) instead of miniapiserver")

// cluster is the running simulated cluster.
type cluster struct {
	server     *apiserver
	components []*process
	kubelet    *kubelet // nil when kwok runs the nodes
	pki        *pki
	client     kubernetes.Interface
	// dir holds the run's logs and data.
	dir string
	// nodes are the names of the cluster's nodes.
	nodes []string
}

// nodeNames are the cluster's nodes: the fake kubelet's (more may join
// later, as in the swap test), or those kwok runs.
func (c *cluster) nodeNames() []string {
	if c.kubelet != nil {
		return c.kubelet.nodeNames()
	}
	return c.nodes
}

// nodeRunner registers the cluster's nodes and runs their pods until ctx
// ends (the fake kubelet, or kwok). It returns the nodes' names and a
// wait that blocks, once ctx has ended, until all it started has stopped
// (wait is set even when err is not nil).
type nodeRunner func(ctx context.Context, t *testing.T, c *cluster) (nodes []string, wait func(), err error)

// fakeKubelet runs three nodes with the test's fake kubelet.
func fakeKubelet(ctx context.Context, t *testing.T, c *cluster) ([]string, func(), error) {
	var err error
	c.kubelet, err = startKubelet(ctx, func(string) (kubernetes.Interface, error) { return c.client, nil }, 3)
	wait := func() {
		if c.kubelet != nil {
			c.kubelet.wait()
		}
	}
	if err != nil {
		return nil, wait, err
	}
	return c.kubelet.nodeNames(), wait, nil
}

// TestCluster starts the cluster, runs the independent checks in
// parallel (each in a namespace of its own), then those about the whole
// run: leader election and the components' logs.
func TestCluster(t *testing.T) {
	start := time.Now()
	c := startCluster(t, fakeKubelet)
	t.Logf("cluster up in %v", time.Since(start).Round(time.Millisecond))
	t.Run("checks", func(t *testing.T) {
		for _, check := range []struct {
			name string
			run  func(*testing.T)
		}{
			{"deployment", c.testDeployment},
			{"job", c.testJob},
			{"cronjob", c.testCronJob},
			{"service endpoints", c.testServiceEndpoints},
			{"volume binding", c.testVolumeBinding},
			{"eviction and disruption budget", c.testEviction},
			{"cascading deletion background", c.testBackgroundDeletion},
			{"cascading deletion foreground", c.testForegroundDeletion},
			{"namespace deletion", c.testNamespaceDeletion},
			{"certificate signing request", c.testCSR},
		} {
			t.Run(check.name, func(t *testing.T) {
				t.Parallel()
				check.run(t)
			})
		}
	})
	t.Run("leader election leases advance", c.testLeaderLeases)
	t.Run("component logs", c.testComponentLogs)
	if len(c.server.missingFlags) > 0 {
		t.Logf("run without the kube-apiserver flags %s, which %s lacks", strings.Join(c.server.missingFlags, ", "), c.server.name)
	}
	t.Logf("cluster test against %s: %v", c.server.name, time.Since(start).Round(time.Millisecond))
}

// startCluster starts the API server, the nodes (runNodes: the fake
// kubelet's, or kwok's) and both components, and waits until the nodes are
// Ready and schedulable.
func startCluster(t *testing.T, runNodes nodeRunner) *cluster {
	dir, err := os.MkdirTemp("", "e2e-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // last, once everything has stopped
		if t.Failed() || os.Getenv("E2E_KEEP") != "" {
			t.Logf("the logs (and data) of the run are kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := newPKI(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{pki: p, dir: dir}
	if *reference {
		c.server = startReference(t, p, port)
	} else {
		c.server = startMiniapiserver(t, dir, p, port)
	}
	if err := p.writeKubeconfigs(c.server.url); err != nil {
		t.Fatal(err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", p.path("kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	config.QPS, config.Burst = -1, -1
	config.WarningHandler = rest.NoWarnings{} // v1 Endpoints' deprecation
	c.client = kubernetes.NewForConfigOrDie(config)

	ctx, cancel := context.WithCancel(context.Background())
	nodes, wait, err := runNodes(ctx, t, c)
	t.Cleanup(func() {
		cancel()
		wait()
	})
	c.nodes = nodes
	if err != nil {
		t.Fatal(err)
	}
	c.components = startComponents(t, dir, p)
	c.waitNodesReady(t)
	return c
}

// waitNodesReady waits until the fake kubelet's nodes are Ready and
// schedulable.
func (c *cluster) waitNodesReady(t *testing.T) {
	t.Helper()
	c.eventually(t, time.Minute, "the nodes Ready and schedulable (the node lifecycle controller lifts the not-ready taint)", "", func() (string, bool, error) {
		nodes, err := c.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return "", false, err
		}
		var seen []string
		ok := len(nodes.Items) == len(c.nodeNames())
		for _, n := range nodes.Items {
			seen = append(seen, fmt.Sprintf("%s taints=%v podCIDR=%q", n.Name, n.Spec.Taints, n.Spec.PodCIDR))
			ok = ok && len(n.Spec.Taints) == 0
		}
		return strings.Join(seen, "; "), ok, nil
	})
}

// namespace creates a namespace for t, deleted (without waiting) when t
// ends.
func (c *cluster) namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns, err := c.client.CoreV1().Namespaces().Create(t.Context(), namespaceObject(prefix), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		err := c.client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}
