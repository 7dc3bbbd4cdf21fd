package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// nodeGetter serves one node.
type nodeGetter struct{ node *corev1.Node }

func (g nodeGetter) Get(_ context.Context, _ string, _ *metav1.GetOptions) (runtime.Object, error) {
	return g.node, nil
}

// TestConnectionInfo checks the address kube's default order picks and
// the port: the node's published one, else the default.
func TestConnectionInfo(t *testing.T) {
	for _, tc := range []struct {
		name      string
		addresses []corev1.NodeAddress
		port      int32
		host      string
		wantPort  string
		err       string
	}{
		{"hostname first", []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "1.2.3.4"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: "n1"}}, 0, "n1", "10250", ""},
		{"internal before external", []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "1.2.3.4"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}, 11250, "10.0.0.1", "11250", ""},
		{"DNS before IP", []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeInternalDNS, Address: "n1.internal"}}, 0, "n1.internal", "10250", ""},
		{"none", nil, 0, "", "", "no preferred addresses found; known addresses: []"},
	} {
		node := &corev1.Node{Status: corev1.NodeStatus{Addresses: tc.addresses}}
		node.Status.DaemonEndpoints.KubeletEndpoint.Port = tc.port
		c, err := NewConnections(nodeGetter{node}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.ConnectionInfo(context.Background(), "n1")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || info.Hostname != tc.host || info.Port != tc.wantPort || info.Scheme != "https" {
			t.Errorf("%s: %+v, %v; want %s:%s", tc.name, info, err, tc.host, tc.wantPort)
		}
	}
}

// TestConfigErrors checks that unusable TLS files stop the server at
// start rather than fail every request.
func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{CAFile: filepath.Join(dir, "missing.crt")}, "kubelet certificate authority"},
		{Config{CAFile: garbage}, "no certificates"},
		{Config{CertFile: garbage}, "must be given together"},
		{Config{CertFile: garbage, KeyFile: garbage}, "kubelet client certificate"},
	} {
		if _, err := NewConnections(nodeGetter{}, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.cfg, err, tc.want)
		}
	}
}
