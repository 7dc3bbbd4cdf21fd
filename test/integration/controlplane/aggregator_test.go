package controlplane

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TestAPIServiceAvailability walks an APIService naming a service
// through kube's reasons for being unavailable, as the service, its
// port and its endpoints come, and checks that its group is listed in
// discovery all the while (its version Stale, with no resources, in the
// aggregated document) and that its requests are 503, as kube-aggregator
// answers them. (test/aggregator checks Passed and FailedDiscoveryCheck
// with a real extension server.)
func TestAPIServiceAvailability(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := srv.CreateNamespace(t)
	group := ns + ".example.com"
	name := "v1." + group
	client := clientset(t)
	apiServices := dynamic.NewForConfigOrDie(srv.ClientConfig).Resource(
		schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": group, "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"insecureSkipTLSVerify": true, "service": map[string]any{"namespace": ns, "name": "api", "port": int64(8443)}},
	}}
	if _, err := apiServices.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { apiServices.Delete(ctx, name, metav1.DeleteOptions{}) })
	wait := func(reason, message string) {
		t.Helper()
		var got string
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			s, err := apiServices.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			conditions, _, _ := unstructured.NestedSlice(s.Object, "status", "conditions")
			for _, c := range conditions {
				m := c.(map[string]any)
				got = fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"])
			}
			if got == "False "+reason+": "+message {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("Available %q, want False %s: %s", got, reason, message)
	}

	wait("ServiceNotFound", fmt.Sprintf(`service/api in %q is not present`, ns))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("ServicePortError", fmt.Sprintf(`service/api in %q is not listening on port 8443`, ns))
	current, err := apiServices.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.SetNestedField(current.Object, int64(443), "spec", "service", "port")
	if _, err := apiServices.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("EndpointsNotFound", fmt.Sprintf(`cannot find endpointslices for service/api in %q`, ns))
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "api-1", Labels: map[string]string{discoveryv1.LabelServiceName: "api"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(8443))}},
	}
	if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("MissingEndpoints", fmt.Sprintf(`endpointslices for service/api in %q have no addresses with port name "https"`, ns))

	// Listed, though unavailable, as kube lists every APIService (in the
	// unaggregated /apis: client-go's ServerGroups leaves Stale versions
	// of the aggregated one out).
	var groups metav1.APIGroupList
	if err := client.Discovery().RESTClient().Get().AbsPath("/apis").SetHeader("Accept", "application/json").Do(ctx).Into(&groups); err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, g := range groups.Groups {
		listed = listed || (g.Name == group && g.PreferredVersion.Version == "v1")
	}
	if !listed {
		t.Errorf("/apis does not list %s", group)
	}
	var aggregated apidiscoveryv2.APIGroupDiscoveryList
	if err := client.Discovery().RESTClient().Get().AbsPath("/apis").
		SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").Do(ctx).Into(&aggregated); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range aggregated.Items {
		if g.Name == group {
			found = len(g.Versions) == 1 && g.Versions[0].Freshness == apidiscoveryv2.DiscoveryFreshnessStale && len(g.Versions[0].Resources) == 0
		}
	}
	if !found {
		t.Errorf("the aggregated /apis does not list %s/v1 Stale without resources", group)
	}

	// Its requests: kube-aggregator's plain-text 503.
	transport, err := rest.TransportFor(srv.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: transport}).Get(srv.ClientConfig.Host + "/apis/" + group + "/v1/things")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != "service unavailable\n" {
		t.Errorf("a request of the group: %d %q, want 503 %q", resp.StatusCode, body, "service unavailable\n")
	}

	if err := apiServices.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var groups metav1.APIGroupList
		if err := client.Discovery().RESTClient().Get().AbsPath("/apis").SetHeader("Accept", "application/json").Do(ctx).Into(&groups); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fmt.Sprint(groups.Groups), group) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still listed after its APIService was deleted", group)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
