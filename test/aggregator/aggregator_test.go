package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var (
	apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	flundersGVR    = schema.GroupVersionResource{Group: "wardle.example.com", Version: "v1alpha1", Resource: "flunders"}
)

const apiServiceName = "v1alpha1.wardle.example.com"

// cluster is miniapiserver with the aggregation layer's flags.
type cluster struct {
	dir        string
	kubeconfig string
	config     *rest.Config
	etcdURL    string
	server     *process
}

// startMiniapiserver runs miniapiserver on an embedded etcd, trusting
// front-proxy-ca for request headers and presenting front-proxy-client
// to extension servers, as kubeadm configures kube-apiserver.
func startMiniapiserver(t *testing.T, p pki) *cluster {
	c := &cluster{dir: t.TempDir()}
	port := freePort(t)
	c.server = start(t, "miniapiserver", filepath.Join(c.dir, "miniapiserver.log"), miniapiserverBin,
		"--data-dir="+filepath.Join(c.dir, "data"), "--embedded-etcd-unsafe-no-fsync", "--log-level=info",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--requestheader-client-ca-file="+p.path("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+p.path("front-proxy-client.crt"),
		"--proxy-client-key-file="+p.path("front-proxy-client.key"))
	etcdLine := regexp.MustCompile(`(?m)^etcd: (https://\S+)`)
	eventually(t, time.Minute, "miniapiserver printing its kubeconfig and etcd", func() error {
		if c.server.exited() {
			t.Fatalf("miniapiserver exited:\n%s", c.server.tail(30))
		}
		m := etcdLine.FindStringSubmatch(c.server.output())
		if m == nil || !strings.Contains(c.server.output(), "kubeconfig: ") {
			return fmt.Errorf("not yet")
		}
		c.etcdURL = m[1]
		return nil
	})
	c.kubeconfig = filepath.Join(c.dir, "data", "kubeconfig")
	var err error
	if c.config, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return c
}

// etcdTLS are the embedded etcd's client files, in the data dir.
func (c *cluster) etcdTLS() transport.TLSInfo {
	pkiDir := filepath.Join(c.dir, "data", "pki")
	return transport.TLSInfo{CertFile: filepath.Join(pkiDir, "etcd-member.crt"), KeyFile: filepath.Join(pkiDir, "etcd-member.key"),
		TrustedCAFile: filepath.Join(pkiDir, "etcd-ca.crt")}
}

// startSampleAPIServer runs sample-apiserver on port, its objects in
// miniapiserver's etcd under /wardle, authenticating and authorizing
// through miniapiserver (it reads the front-proxy CA from
// kube-system/extension-apiserver-authentication).
func startSampleAPIServer(t *testing.T, c *cluster, p pki, port int) *process {
	tlsInfo := c.etcdTLS()
	return start(t, "sample-apiserver", filepath.Join(c.dir, fmt.Sprintf("sample-apiserver-%d.log", time.Now().UnixNano())), sampleAPIServerBin,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+p.path("wardle.crt"), "--tls-private-key-file="+p.path("wardle.key"),
		"--etcd-servers="+c.etcdURL, "--etcd-prefix=/wardle",
		"--etcd-cafile="+tlsInfo.TrustedCAFile, "--etcd-certfile="+tlsInfo.CertFile, "--etcd-keyfile="+tlsInfo.KeyFile,
		"--kubeconfig="+c.kubeconfig, "--authentication-kubeconfig="+c.kubeconfig, "--authorization-kubeconfig="+c.kubeconfig)
}

// register creates the namespace wardle, its service api (port 443,
// named https) with an EndpointSlice naming 127.0.0.1:port, and the
// APIService of wardle.example.com/v1alpha1 behind it.
//
// kube's validation refuses loopback addresses in EndpointSlices (and
// so does this server's), so the slice is written to etcd as a
// controller of a real cluster could not: the test's extension server
// listens on loopback only.
func register(t *testing.T, c *cluster, p pki, port int) {
	ctx := t.Context()
	client := kubernetes.NewForConfigOrDie(c.config)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "wardle"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "wardle"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}
	if _, err := client.CoreV1().Services("wardle").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeEndpointSlice(t, c, port)
	caBundle, err := os.ReadFile(p.path("wardle-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": apiServiceName},
		"spec": map[string]any{
			"group": "wardle.example.com", "version": "v1alpha1",
			"service":  map[string]any{"namespace": "wardle", "name": "api", "port": int64(443)},
			"caBundle": caBundle, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		},
	}}
	if _, err := dynamic.NewForConfigOrDie(c.config).Resource(apiServicesGVR).Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func writeEndpointSlice(t *testing.T, c *cluster, port int) {
	slice := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: "api-loopback", Namespace: "wardle", UID: "5d4c3b2a-0000-4000-8000-000000000001",
			Labels: map[string]string{discoveryv1.LabelServiceName: "api"}, CreationTimestamp: metav1.Now()},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	data, err := json.Marshal(slice)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := c.etcdTLS().ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{c.etcdURL}, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	if _, err := etcd.Put(t.Context(), "/registry/endpointslices/wardle/api-loopback", string(data)); err != nil {
		t.Fatal(err)
	}
}

// availability is the APIService's Available condition ("" when none).
func availability(ctx context.Context, c *cluster) (status, reason, message string, err error) {
	obj, err := dynamic.NewForConfigOrDie(c.config).Resource(apiServicesGVR).Get(ctx, apiServiceName, metav1.GetOptions{})
	if err != nil {
		return "", "", "", err
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, cond := range conditions {
		m := cond.(map[string]any)
		if m["type"] == "Available" {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"]), nil
		}
	}
	return "", "", "", nil
}

func waitAvailable(t *testing.T, c *cluster, want, wantReason string, sample *process) string {
	var message string
	eventually(t, 90*time.Second, "APIService "+apiServiceName+" Available="+want, func() error {
		if sample != nil && sample.exited() {
			t.Fatalf("sample-apiserver exited:\n%s", sample.tail(40))
		}
		status, reason, msg, err := availability(t.Context(), c)
		if err != nil {
			return err
		}
		if status != want || reason != wantReason {
			return fmt.Errorf("Available=%s (%s): %s", status, reason, msg)
		}
		message = msg
		return nil
	})
	return message
}

// kubectl runs kubectl against the cluster and returns its standard
// output; its standard error (warnings, errors) goes in the error, or
// with out when stderr is true.
func kubectl(t *testing.T, c *cluster, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "kubectl", append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(c.dir, "kubecache"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return string(out), nil
}
