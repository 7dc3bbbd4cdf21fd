package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kwokNodes is how many nodes kwok simulates for the conformance run.
const kwokNodes = 3

// kwokAnnotation marks the nodes kwok manages (its documented one).
const kwokAnnotation = "kwok.x-k8s.io/node"

// TestConformance runs Kubernetes' conformance suite on a cluster started
// as TestCluster's, with kwok ($E2E_BIN/kwok, its default node and pod
// stages in $E2E_BIN/kwok-stages.yaml) in place of the fake kubelet:
// hack/conformance.sh runs it with $CONFORMANCE_RUN, a bash command line
// (the e2e.test run), given $KUBECONFIG (the admin's) and
// $CONFORMANCE_SERVER (miniapiserver or kube-apiserver). The test fails
// when that command does; without $CONFORMANCE_RUN it is skipped.
func TestConformance(t *testing.T) {
	run := os.Getenv("CONFORMANCE_RUN")
	if run == "" {
		t.Skip("CONFORMANCE_RUN is not set: run hack/conformance.sh")
	}
	start := time.Now()
	c := startCluster(t, kwok)
	t.Logf("cluster up (%s, kwok nodes %v) in %v; logs in %s", c.server.name, c.nodes, time.Since(start).Round(time.Millisecond), c.dir)
	cmd := exec.CommandContext(t.Context(), "bash", "-c", run)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.pki.path("kubeconfig"), "CONFORMANCE_SERVER="+c.server.name,
		"CONFORMANCE_CLUSTER_DIR="+c.dir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("%s: %v", run, err)
	}
	for _, p := range c.components {
		if ended, how := p.exited(); ended {
			t.Errorf("%s exited during the run (%s); its log ends:\n%s", p.name, how, tail(p, 30))
		}
	}
}

// kwok registers kwokNodes nodes annotated for kwok and runs kwok on
// them with the admin's kubeconfig: kwok's node stages make them Ready
// and renew their Leases, its pod stages make their pods Running (with an
// IP of the node's podCIDR) and remove deleted ones. No containers run.
func kwok(ctx context.Context, t *testing.T, c *cluster) ([]string, func(), error) {
	bin := os.Getenv("E2E_BIN")
	if bin == "" {
		t.Skip("E2E_BIN is not set: run hack/conformance.sh")
	}
	proc, err := startProcess("kwok", filepath.Join(c.dir, "kwok.log"), filepath.Join(bin, "kwok"),
		"--kubeconfig="+c.pki.path("kubeconfig"),
		"--config="+filepath.Join(bin, "kwok-stages.yaml"),
		"--manage-nodes-with-annotation-selector="+kwokAnnotation+"=fake",
		"--node-lease-duration-seconds=40",
		"--cidr="+clusterCIDR,
	)
	if err != nil {
		return nil, func() {}, err
	}
	var nodes []string
	for i := range kwokNodes {
		name := fmt.Sprintf("kwok-node-%d", i)
		nodes = append(nodes, name)
		if _, err := c.client.CoreV1().Nodes().Create(ctx, kwokNode(name, i), metav1.CreateOptions{}); err != nil {
			return nil, proc.stop, fmt.Errorf("registering node %s: %w", name, err)
		}
	}
	return nodes, proc.stop, nil
}

// kwokNode is node name as kwok's documentation registers one, without
// its NoSchedule taint (conformance pods do not tolerate it) and with an
// address of its own; kwok's node-initialize stage fills in the rest of
// its status (conditions, nodeInfo) and keeps what is set here.
func kwokNode(name string, i int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.0.%d", i+2)},
				{Type: corev1.NodeHostName, Address: name},
			},
		},
	}
}
