package aggregator

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// TestSampleAPIServer registers sample-apiserver as the extension server
// of wardle.example.com/v1alpha1 and uses it through miniapiserver as a
// user would: kubectl creates and lists flunders, a watch sees them come,
// discovery (aggregated and not) lists the group, and once the server
// stops the APIService is unavailable with kube's reason.
func TestSampleAPIServer(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed")
	}
	p := newPKI(t, t.TempDir())
	c := startMiniapiserver(t, p)
	port := freePort(t)
	sample := startSampleAPIServer(t, c, p, port)
	register(t, c, p, port)
	msg := waitAvailable(t, c, "True", "Passed", sample)
	if msg != "all checks passed" {
		t.Errorf("Available message %q, want kube's %q", msg, "all checks passed")
	}

	t.Run("kubectl", func(t *testing.T) {
		flunder := `{"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder", "metadata": {"name": "first", "namespace": "wardle"}}`
		cmd := exec.CommandContext(t.Context(), "kubectl", "--kubeconfig", c.kubeconfig, "create", "-f", "-")
		cmd.Stdin = strings.NewReader(flunder)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl create flunder: %v\n%s", err, out)
		}
		out, err := kubectl(t, c, "get", "flunders", "-n", "wardle", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "flunder.wardle.example.com/first" {
			t.Errorf("kubectl get flunders: %v\n%s", err, out)
		}
		out, err = kubectl(t, c, "api-resources", "--api-group=wardle.example.com", "-o", "name")
		if err != nil || !strings.Contains(out, "flunders.wardle.example.com") || !strings.Contains(out, "fischers.wardle.example.com") {
			t.Errorf("kubectl api-resources: %v\n%s", err, out)
		}
	})

	t.Run("watch", func(t *testing.T) {
		flunders := dynamic.NewForConfigOrDie(c.config).Resource(flundersGVR).Namespace("wardle")
		w, err := flunders.Watch(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
			"metadata": map[string]any{"name": "watched"},
		}}
		if _, err := flunders.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(30 * time.Second)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("the watch ended")
				}
				if u, isObj := ev.Object.(*unstructured.Unstructured); isObj && ev.Type == watch.Added && u.GetName() == "watched" {
					return
				}
			case <-timeout:
				t.Fatal("no ADDED event of the flunder watched")
			}
		}
	})

	t.Run("discovery", func(t *testing.T) {
		dc := discovery.NewDiscoveryClientForConfigOrDie(c.config)
		groups, resources, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range groups {
			if g.Name == "wardle.example.com" {
				found = g.PreferredVersion.Version == "v1alpha1"
			}
		}
		if !found {
			t.Errorf("the aggregated discovery has no wardle.example.com preferring v1alpha1")
		}
		if got := names(resources, "wardle.example.com/v1alpha1"); !strings.Contains(got, "flunders") {
			t.Errorf("wardle.example.com/v1alpha1 resources: %s", got)
		}
		// The unaggregated /apis and /apis/GROUP, served from the APIServices.
		body, err := dc.RESTClient().Get().AbsPath("/apis/wardle.example.com").SetHeader("Accept", "application/json").DoRaw(t.Context())
		if err != nil || !strings.Contains(string(body), `"preferredVersion":{"groupVersion":"wardle.example.com/v1alpha1"`) {
			t.Errorf("/apis/wardle.example.com: %v\n%s", err, body)
		}
	})

	t.Run("openapi", func(t *testing.T) {
		rc := discovery.NewDiscoveryClientForConfigOrDie(c.config).RESTClient()
		index, err := rc.Get().AbsPath("/openapi/v3").DoRaw(t.Context())
		if err != nil || !strings.Contains(string(index), `"apis/wardle.example.com/v1alpha1"`) {
			t.Errorf("/openapi/v3 does not list apis/wardle.example.com/v1alpha1: %v", err)
		}
		doc, err := rc.Get().AbsPath("/openapi/v3/apis/wardle.example.com/v1alpha1").SetHeader("Accept", "application/json").DoRaw(t.Context())
		if err != nil || !strings.Contains(string(doc), `"io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1.Flunder"`) {
			t.Errorf("/openapi/v3/apis/wardle.example.com/v1alpha1 has no Flunder: %v", err)
		}
		v2, err := rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(t.Context())
		if err != nil || !strings.Contains(string(v2), `"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders"`) ||
			!strings.Contains(string(v2), `"io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1.Flunder"`) || !strings.Contains(string(v2), `"/api/v1/pods"`) {
			t.Errorf("/openapi/v2 lacks the flunders' path or definition, or lost its own: %v", err)
		}
		out, err := kubectl(t, c, "explain", "flunders.spec")
		if err != nil || !strings.Contains(out, "reference") {
			t.Errorf("kubectl explain flunders.spec: %v\n%s", err, out)
		}
	})

	t.Run("latency", func(t *testing.T) {
		// Logged, not checked: what the hop through this server costs a
		// list of flunders, against asking sample-apiserver directly
		// (authenticated as the front proxy would name the admin).
		proxied := medianLatency(t, c.config, c.config.Host)
		direct := medianLatency(t, directConfig(t, c, p), fmt.Sprintf("https://127.0.0.1:%d", port))
		t.Logf("median list of flunders: %v through miniapiserver, %v directly", proxied, direct)
	})

	t.Run("unavailable", func(t *testing.T) {
		sample.stop()
		msg := waitAvailable(t, c, "False", "FailedDiscoveryCheck", nil)
		want := fmt.Sprintf("failing or missing response from https://127.0.0.1:%d/apis/wardle.example.com/v1alpha1: ", port)
		if !strings.HasPrefix(msg, want) {
			t.Errorf("message %q, want it to start with kube's %q", msg, want)
		}
		out, err := kubectl(t, c, "get", "flunders", "-n", "wardle")
		if err == nil || !strings.Contains(err.Error(), "ServiceUnavailable") {
			t.Errorf("kubectl get flunders of a stopped server: %v\n%s", err, out)
		}
	})
}

func names(lists []*metav1.APIResourceList, gv string) string {
	var out []string
	for _, l := range lists {
		if l.GroupVersion == gv {
			for _, r := range l.APIResources {
				out = append(out, r.Name)
			}
		}
	}
	return strings.Join(out, ",")
}

// medianLatency is the median of 50 lists of flunders at host with cfg's
// credentials.
func medianLatency(t *testing.T, cfg *rest.Config, host string) time.Duration {
	cfg = rest.CopyConfig(cfg)
	cfg.Host = host
	cfg.QPS, cfg.Burst = -1, 0 // measure the servers, not client-go's rate limiter
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var took []time.Duration
	for range 50 {
		start := time.Now()
		if _, err := client.Resource(flundersGVR).Namespace("wardle").List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[len(took)/2]
}

// directConfig reaches sample-apiserver itself as the front proxy, naming
// the admin (kubernetes-admin in system:masters) in the request headers.
func directConfig(t *testing.T, c *cluster, p pki) *rest.Config {
	caData, err := os.ReadFile(p.path("wardle-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{
		TLSClientConfig: rest.TLSClientConfig{CAData: caData, ServerName: "api.wardle.svc",
			CertFile: p.path("front-proxy-client.crt"), KeyFile: p.path("front-proxy-client.key")},
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return transport.NewAuthProxyRoundTripper("kubernetes-admin", "", []string{"system:masters", "system:authenticated"}, nil, rt)
	})
	return cfg
}
