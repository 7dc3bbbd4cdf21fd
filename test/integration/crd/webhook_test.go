package crd

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// conversionWebhook is a conversion webhook over HTTPS: v1 Widgets keep
// their color in spec.color, v2 ones in spec.colour. fail makes it answer
// every review with a failure.
type conversionWebhook struct {
	server   *testserver.WebhookServer
	reviews  atomic.Int64
	failWith atomic.Value // string
}

// startConversionWebhook serves the webhook with a certificate for
// 127.0.0.1 and the names of the service svc.ns.
func startConversionWebhook(t testing.TB, svc, ns string) *conversionWebhook {
	t.Helper()
	w := &conversionWebhook{}
	w.failWith.Store("")
	w.server = testserver.StartWebhookServer(t, http.HandlerFunc(w.serve), svc+"."+ns+".svc")
	return w
}

func (w *conversionWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	w.reviews.Add(1)
	review := &apiextensionsv1.ConversionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(rw, "bad review", http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	if msg := w.failWith.Load().(string); msg != "" {
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: msg}
	}
	to := review.Request.DesiredAPIVersion
	for _, raw := range review.Request.Objects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		spec, _ := u.Object["spec"].(map[string]interface{})
		from, into := "color", "colour"
		if strings.HasSuffix(to, "/v1") {
			from, into = "colour", "color"
		}
		if v, ok := spec[from]; ok && spec != nil {
			delete(spec, from)
			spec[into] = v
		}
		u.SetAPIVersion(to)
		data, _ := u.MarshalJSON()
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtimeRaw(data))
	}
	review.Response, review.Request = resp, nil
	rw.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rw).Encode(review) //nolint:errcheck // the client reports a broken answer
}

// webhookCRD is testdata/widgets.yaml served at v1 (storage) and v2,
// converted by a webhook at cfg.
func webhookCRD(t testing.TB, cfg *apiextensionsv1.WebhookClientConfig) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := crdFromFile(t, "widgets.yaml", group(t))
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage, v2.SelectableFields = "v2", false, nil
	spec := v2.Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["colour"] = spec.Properties["color"]
	delete(spec.Properties, "color")
	spec.Required = []string{"colour"}
	spec.XValidations = nil
	v2.Schema.OpenAPIV3Schema.Properties["spec"] = spec
	v2.AdditionalPrinterColumns = nil
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: cfg, ConversionReviewVersions: []string{"v1"}},
	}
	return crd
}

// TestConversionWebhook: versions converted by a webhook (ConversionReview
// v1 over HTTPS, trusting the caBundle, at a URL and behind a service):
// written at v2, stored at v1, read at both, listed and watched at v2;
// a failing webhook fails the request with kube's message.
func TestConversionWebhook(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	hook := startConversionWebhook(t, "converter", ns)
	url := "https://127.0.0.1:" + strconv.Itoa(hook.server.Port()) + "/convert"
	t.Run("url", func(t *testing.T) {
		checkConversionWebhook(t, hook, ns, &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: hook.server.CAPEM})
	})
	t.Run("service", func(t *testing.T) {
		if *reference {
			t.Skip("the reference reaches services at their cluster IP, which nothing serves here")
		}
		ip := testserver.HostAddress()
		if ip == "" {
			t.Skip("this host has no address but loopback, which Endpoints may not name")
		}
		p := hook.server.Port()
		core := clientset(t).CoreV1()
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "converter"}, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "https", Port: 8443, TargetPort: intstr.FromInt32(int32(p))}}}}
		if _, err := core.Services(ns).Create(ctx(t), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eps := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "converter"}, Subsets: []corev1.EndpointSubset{{ //nolint:staticcheck // kube's resolver reads Endpoints
			Addresses: []corev1.EndpointAddress{{IP: ip}}, Ports: []corev1.EndpointPort{{Name: "https", Port: int32(p)}}}}}
		if _, err := core.Endpoints(ns).Create(ctx(t), eps, metav1.CreateOptions{}); err != nil { //nolint:staticcheck // as above
			t.Fatal(err)
		}
		checkConversionWebhook(t, hook, ns, &apiextensionsv1.WebhookClientConfig{CABundle: hook.server.CAPEM,
			Service: &apiextensionsv1.ServiceReference{Namespace: ns, Name: "converter", Port: ptr.To[int32](8443), Path: ptr.To("/convert")}})
	})
}

func checkConversionWebhook(t *testing.T, hook *conversionWebhook, ns string, cfg *apiextensionsv1.WebhookClientConfig) {
	crd := createEstablished(t, webhookCRD(t, cfg))
	v1 := schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "widgets"}
	v2 := v1
	v2.Version = "v2"
	before := hook.reviews.Load()
	w := widget(t, v2, "w1", "{colour: green}")
	created, err := dyn(t).Resource(v2).Namespace(ns).Create(ctx(t), w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedString(created.Object, "spec", "colour"); c != "green" || hook.reviews.Load() == before {
		t.Errorf("created at v2: %v (reviews %d)", created.Object["spec"], hook.reviews.Load()-before)
	}
	got, err := dyn(t).Resource(v1).Namespace(ns).Get(ctx(t), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedString(got.Object, "spec", "color"); c != "green" {
		t.Errorf("read at v1: %v", got.Object["spec"])
	}
	watcher, err := dyn(t).Resource(v2).Namespace(ns).Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	select {
	case ev := <-watcher.ResultChan():
		u := ev.Object.(*unstructured.Unstructured)
		if c, _, _ := unstructured.NestedString(u.Object, "spec", "colour"); c != "green" || u.GetAPIVersion() != v2.GroupVersion().String() {
			t.Errorf("watch at v2: %s %v", u.GetAPIVersion(), u.Object["spec"])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no event")
	}
	list, err := dyn(t).Resource(v2).Namespace(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetAPIVersion() != v2.GroupVersion().String() {
		t.Fatalf("list at v2: %v %v", list, err)
	}

	hook.failWith.Store("the converter is broken")
	defer hook.failWith.Store("")
	_, err = dyn(t).Resource(v2).Namespace(ns).Get(ctx(t), "w1", metav1.GetOptions{})
	// kube words it as the error of decoding what it read from etcd
	// ("StorageError: corrupt object, ..., object not decodable ...: ").
	want := "conversion webhook for " + crd.Spec.Group + "/v1, Kind=Widget failed: the converter is broken"
	if !apierrors.IsInternalError(err) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("a failing webhook: %v, want %q", err, want)
	}
}

func runtimeRaw(data []byte) runtime.RawExtension { return runtime.RawExtension{Raw: data} }
