package wire

import (
	"context"
	"encoding/json"
	"fmt"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"net/http"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

const mediaTypeProtobuf = "application/vnd.kubernetes.protobuf"

// exchange is one request a client made and what the server answered.
type exchange struct {
	method, url, accept          string
	code                         int
	contentType, contentEncoding string
	uncompressed                 bool // Go's transport removed a gzip encoding
}

// recorder records the exchanges of a client-go client, to check what
// went over the wire under it.
type recorder struct {
	mu        sync.Mutex
	exchanges []exchange
}

func (rec *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil {
			rec.mu.Lock()
			rec.exchanges = append(rec.exchanges, exchange{
				method: r.Method, url: r.URL.String(), accept: r.Header.Get("Accept"), code: resp.StatusCode,
				contentType: resp.Header.Get("Content-Type"), contentEncoding: resp.Header.Get("Content-Encoding"),
				uncompressed: resp.Uncompressed,
			})
			rec.mu.Unlock()
		}
		return resp, err
	})
}

// find returns the exchanges whose URL contains every part.
func (rec *recorder) find(parts ...string) []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []exchange
next:
	for _, e := range rec.exchanges {
		for _, p := range parts {
			if !strings.Contains(e.url, p) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// recordedConfig is the shared server's client config with a recorder.
func recordedConfig() (*rest.Config, *recorder) {
	rec := &recorder{}
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.Wrap(rec.wrap)
	return cfg, rec
}

// TestProtobufTypedClient checks that client-go's typed clients get
// protobuf for objects, lists and Status errors, and decode them.
func TestProtobufTypedClient(t *testing.T) {
	ns := namespace(t)
	cfg, rec := recordedConfig()
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	cm, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "pb", Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "pb" || cm.Data["k"] != "v" || cm.ResourceVersion == "" || cm.UID == "" {
		t.Errorf("created: %+v", cm)
	}
	got, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "pb", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != cm.ResourceVersion || got.Labels["a"] != "b" {
		t.Fatalf("get: %+v %v", got, err)
	}
	replicas := int32(2)
	deploy, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil || *deploy.Spec.Replicas != 2 || deploy.Spec.Template.Spec.Containers[0].TerminationMessagePath == "" {
		t.Fatalf("deployment (defaulted on the server): %+v %v", deploy, err)
	}
	list, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, item := range list.Items {
		names[item.Name] = true
	}
	if len(list.Items) != 2 || !names["pb"] || !names["kube-root-ca.crt"] || list.ResourceVersion == "" {
		t.Errorf("list: %d items %v, rv %q", len(list.Items), names, list.ResourceVersion)
	}

	// Errors are Status objects in protobuf, decoded into StatusErrors.
	_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "missing" not found` {
		t.Errorf("get missing: %v", err)
	}
	_, err = client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{})
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errorsAs(err, &status) || len(status.Status().Details.Causes) == 0 ||
		status.Status().Details.Causes[0].Field != "metadata.name" {
		t.Errorf("invalid create: %v", err)
	}

	for _, e := range rec.find("/namespaces/" + ns + "/") {
		if e.contentType != mediaTypeProtobuf {
			t.Errorf("%s %s (Accept %q): %d %q, want protobuf", e.method, e.url, e.accept, e.code, e.contentType)
		}
	}
	if n := len(rec.find("/namespaces/" + ns + "/")); n != 6 {
		t.Errorf("%d requests recorded, want 6", n)
	}
}

func errorsAs(err error, status *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*status = s
	return ok
}

// TestProtobufListMatchesJSON lists many objects in protobuf (a response
// over the gzip threshold, as client-go asks for it compressed) and checks
// it holds exactly the items and metadata of the JSON list.
func TestProtobufListMatchesJSON(t *testing.T) {
	ns := namespace(t)
	const n = 300
	createConfigMaps(t, ns, n, 1024)
	path := "/api/v1/namespaces/" + ns + "/configmaps"

	js := do(t, req{path: path})
	var want corev1.ConfigMapList
	if err := json.Unmarshal(js.body, &want); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []string{"", "?limit=120"} {
		pb := do(t, req{path: path + limit, headers: []string{"Accept: " + mediaTypeProtobuf + ", application/json"}})
		if pb.code != 200 || pb.header.Get("Content-Type") != mediaTypeProtobuf {
			t.Fatalf("got %d %q", pb.code, pb.header.Get("Content-Type"))
		}
		got := decodeProtobuf(t, pb.body).(*corev1.ConfigMapList)
		if limit == "" {
			got.TypeMeta = metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(&want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("protobuf list differs from the JSON list:\n%.2000s\n%.2000s", gotJSON, wantJSON)
			}
			continue
		}
		if len(got.Items) != 120 || got.Continue == "" || got.RemainingItemCount == nil || *got.RemainingItemCount != int64(n+1-120) {
			t.Errorf("page: %d items, continue %q, remaining %v", len(got.Items), got.Continue, got.RemainingItemCount)
		}
	}
}

// codecs decode client-go's types, kube-aggregator's APIServices and
// meta.k8s.io's (Table, PartialObjectMetadata...).
var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiregistrationv1.AddToScheme(s); err != nil {
		panic(err)
	}
	metav1.AddMetaToScheme(s)
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	return serializer.NewCodecFactory(s)
}()

// decodeProtobuf decodes a protobuf body with client-go's scheme.
func decodeProtobuf(t *testing.T, data []byte) runtime.Object {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	obj, _, err := info.Serializer.Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("decoding protobuf (%d bytes): %v", len(data), err)
	}
	return obj
}

// createConfigMaps creates n ConfigMaps cm-0 .. cm-<n-1> with one value of
// size bytes, 16 at a time.
func createConfigMaps(t testing.TB, ns string, n, size int) {
	t.Helper()
	client := clientset(t)
	value := strings.Repeat("x", size)
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			_, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"bucket": fmt.Sprint(i % 10)}},
				Data:       map[string]string{"v": value},
			}, metav1.CreateOptions{})
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating configmaps: %v", err)
	}
}

// TestProtobufMetadata checks PartialObjectMetadata(List) in protobuf, as
// the metadata client asks, and kube's 406 for the one that does not fit.
func TestProtobufMetadata(t *testing.T) {
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	asList := "Accept: " + mediaTypeProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	asObject := "Accept: " + mediaTypeProtobuf + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

	r := do(t, req{path: path, headers: []string{asList}})
	list, ok := decodeProtobuf(t, r.body).(*metav1.PartialObjectMetadataList)
	if r.code != 200 || !ok || len(list.Items) != 1 || list.Items[0].Name != "kube-root-ca.crt" || list.ResourceVersion == "" {
		t.Fatalf("list: %d %#v", r.code, list)
	}
	r = do(t, req{path: path + "/kube-root-ca.crt", headers: []string{asObject}})
	obj, ok := decodeProtobuf(t, r.body).(*metav1.PartialObjectMetadata)
	if r.code != 200 || !ok || obj.Name != "kube-root-ca.crt" || obj.Namespace != ns || obj.UID == "" {
		t.Fatalf("object: %d %#v", r.code, obj)
	}
	tests := []struct {
		name, path, accept, message string
	}{
		{"object as a list", path + "/kube-root-ca.crt", asList,
			"you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"},
		{"list as an object", path, asObject,
			"you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, req{path: tc.path, headers: []string{tc.accept}})
			// The Status cannot be PartialObjectMetadata: it goes
			// out in the next acceptable type, JSON.
			want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"` + tc.message +
				`","reason":"NotAcceptable","code":406}` + "\n"
			if r.code != 406 || string(r.body) != want {
				t.Errorf("got %d %s\nwant %s", r.code, r.body, want)
			}
		})
	}
}
