package crd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// names lists the names of a list's items, sorted.
func names(list *unstructured.UnstructuredList) []string {
	var out []string
	for _, item := range list.Items {
		out = append(out, item.GetName())
	}
	slices.Sort(out)
	return out
}

// TestSelectors: label selectors, and field selectors on the name and on
// the definition's selectableFields; any other field is refused in
// kube's words.
func TestSelectors(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	client := dyn(t).Resource(gvr).Namespace(ns)
	for name, color := range map[string]string{"a": "red", "b": "blue", "c": "red"} {
		w := widget(t, gvr, name, "{color: "+color+"}")
		w.SetLabels(map[string]string{"color": color})
		if _, err := client.Create(ctx(t), w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		opts metav1.ListOptions
		want []string
	}{
		{metav1.ListOptions{FieldSelector: "spec.color=red"}, []string{"a", "c"}},
		{metav1.ListOptions{FieldSelector: "spec.color!=red,metadata.name!=c"}, []string{"b"}},
		{metav1.ListOptions{FieldSelector: "metadata.name=c"}, []string{"c"}},
		{metav1.ListOptions{LabelSelector: "color=blue"}, []string{"b"}},
		{metav1.ListOptions{FieldSelector: "spec.color=red", LabelSelector: "color=blue"}, nil},
	} {
		list, err := client.List(ctx(t), tc.opts)
		if err != nil {
			t.Fatalf("%+v: %v", tc.opts, err)
		}
		if got := names(list); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.opts, got, tc.want)
		}
	}
	_, err := client.List(ctx(t), metav1.ListOptions{FieldSelector: "spec.size=1"})
	if !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: spec.size" {
		t.Errorf("a field that is not selectable: %v", err)
	}
	w, err := client.Watch(ctx(t), metav1.ListOptions{FieldSelector: "spec.color=blue"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := client.Patch(ctx(t), "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Create(ctx(t), widget(t, gvr, "d", "{color: blue}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for len(seen) < 2 {
		select {
		case ev := <-w.ResultChan():
			seen = append(seen, fmt.Sprintf("%s %s", ev.Type, ev.Object.(*unstructured.Unstructured).GetName()))
		case <-time.After(20 * time.Second):
			t.Fatalf("watch: %v", seen)
		}
	}
	if !slices.Equal(seen, []string{"ADDED b", "ADDED d"}) {
		t.Errorf("watch with a field selector: %v", seen)
	}
}

// TestPrinterColumns: Tables have the definition's additionalPrinterColumns
// (typed cells, priority, Age last), for lists and objects.
func TestPrinterColumns(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	if _, err := dyn(t).Resource(gvr).Namespace(ns).Create(ctx(t), widget(t, gvr, "w1", "{color: red, replicas: 3}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/apis/%s/namespaces/%s/widgets", gvr.GroupVersion(), ns)
	code, body := do(t, http.MethodGet, path, "", nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	table := &metav1.Table{}
	if code != http.StatusOK || decodeJSON(body, table) != nil {
		t.Fatalf("%d %s", code, body)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, fmt.Sprintf("%s/%s/%d", c.Name, c.Type, c.Priority))
	}
	if want := []string{"Name/string/0", "Color/string/0", "Replicas/integer/0", "Ready/boolean/1", "Age/date/0"}; !slices.Equal(cols, want) {
		t.Errorf("columns %v, want %v", cols, want)
	}
	if len(table.Rows) != 1 || fmt.Sprint(table.Rows[0].Cells[:4]) != "[w1 red 3 <nil>]" {
		t.Errorf("rows %+v", table.Rows)
	}
}

// TestServerSideApply: applies merge by the schema (list maps by key),
// conflicts between managers are kube's 409, forcing takes the field.
func TestServerSideApply(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	client := dyn(t).Resource(gvr).Namespace(ns)
	apply := func(manager string, force bool, spec string) (*unstructured.Unstructured, error) {
		return client.Apply(ctx(t), "w1", widget(t, gvr, "w1", spec), metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	if _, err := apply("alice", false, "{color: red, ports: [{name: http, port: 80}]}"); err != nil {
		t.Fatal(err)
	}
	got, err := apply("bob", false, "{ports: [{name: https, port: 443}]}")
	if err != nil {
		t.Fatal(err)
	}
	ports, _, _ := unstructured.NestedSlice(got.Object, "spec", "ports")
	if len(ports) != 2 {
		t.Errorf("ports %v: a list map merges by key", ports)
	}
	_, err = apply("bob", false, "{color: blue, ports: [{name: https, port: 443}]}")
	if !apierrors.IsConflict(err) || err.Error() != `Apply failed with 1 conflict: conflict with "alice": .spec.color` {
		t.Errorf("conflicting apply: %v", err)
	}
	// color is immutable (a transition rule): force fails validation, as
	// in kube, after taking the field.
	_, err = apply("bob", true, "{color: blue}")
	if !apierrors.IsInvalid(err) || !strings.HasSuffix(err.Error(), `"w1" is invalid: spec: Invalid value: color is immutable`) {
		t.Errorf("forced apply of an immutable field: %v", err)
	}
	got, err = apply("bob", true, "{color: red, replicas: 4}")
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, m := range got.GetManagedFields() {
		managers = append(managers, m.Manager+"/"+string(m.Operation))
	}
	if !slices.Equal(managers, []string{"alice/Apply", "bob/Apply"}) {
		t.Errorf("managers %v", managers)
	}
}

// TestMediaTypes: custom resources speak JSON and YAML, not protobuf, and
// take no strategic merge patch, with kube's answers.
func TestMediaTypes(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	if _, err := dyn(t).Resource(gvr).Namespace(ns).Create(ctx(t), widget(t, gvr, "w1", "{color: red}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/apis/%s/namespaces/%s/widgets", gvr.GroupVersion(), ns)
	code, body := do(t, http.MethodGet, path+"/w1", "", nil, "Accept", "application/yaml")
	if code != http.StatusOK || !strings.HasPrefix(string(body), "apiVersion: "+gvr.GroupVersion().String()+"\nkind: Widget\n") {
		t.Errorf("YAML: %d %s", code, body)
	}
	code, body = do(t, http.MethodGet, path, "", nil, "Accept", "application/vnd.kubernetes.protobuf, application/json")
	if code != http.StatusOK || !strings.Contains(string(body), `"kind":"WidgetList"`) {
		t.Errorf("protobuf or JSON: %d %s", code, body)
	}
	code, body = do(t, http.MethodGet, path, "", nil, "Accept", "application/json;stream=watch")
	if code != http.StatusOK || !strings.Contains(string(body), `"kind":"WidgetList"`) {
		t.Errorf("stream=watch on a list: %d %s", code, body)
	}
	for _, tc := range []struct {
		name                      string
		method, path, contentType string
		accept                    string
		wantCode                  int
		wantMessage               string
	}{
		{"protobuf only", http.MethodGet, path, "", "application/vnd.kubernetes.protobuf", 406,
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{"strategic merge patch", http.MethodPatch, path + "/w1", "application/strategic-merge-patch+json", "application/json", 415,
			"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"},
	} {
		r := send(t, tc.method, tc.path, tc.contentType, []byte("{}"), "Accept", tc.accept)
		if r.code != tc.wantCode || !strings.Contains(string(r.body), tc.wantMessage) {
			t.Errorf("%s: %d %s", tc.name, r.code, r.body)
		}
	}
	if *reference {
		return // kube crashes on a protobuf body for a custom resource
	}
	r := send(t, http.MethodPost, path, "application/vnd.kubernetes.protobuf", []byte("k8s\x00"), "Accept", "application/json")
	if r.code != http.StatusUnsupportedMediaType || !strings.Contains(string(r.body), "accepted media types include: application/json, application/yaml") {
		t.Errorf("protobuf body: %d %s", r.code, r.body)
	}
}

// TestKeysAndWatchCache: custom resources are kept where kube keeps them
// (/registry/<group>/<plural>/<namespace>/<name>), and watched through a
// watch cache sized by --watch-cache-sizes as "<plural>.<group>", or
// through etcd when the size is 0.
func TestKeysAndWatchCache(t *testing.T) {
	if *reference {
		t.Skip("starts servers of its own")
	}
	t.Parallel()
	cached, uncached := group(t), "uncached-"+group(t)
	ts := testserver.Start(t, func(o *app.Options) {
		o.WatchCacheSizes = []string{"widgets." + cached + "#50", "widgets." + uncached + "#0"}
	})
	client := dynamic.NewForConfigOrDie(ts.ClientConfig)
	for _, g := range []string{cached, uncached} {
		t.Run(g, func(t *testing.T) {
			crd := crdFromFile(t, "widgets.yaml", g)
			if _, err := crdClientFor(t, ts.ClientConfig).ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), crd, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			gvr := schema.GroupVersionResource{Group: g, Version: "v1", Resource: "widgets"}
			res := client.Resource(gvr).Namespace("default")
			var w watch.Interface
			err := pollUntil(t, func() bool {
				var err error
				w, err = res.Watch(ctx(t), metav1.ListOptions{})
				return err == nil
			})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if _, err := res.Create(ctx(t), widget(t, gvr, "w1", "{color: red}"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-w.ResultChan():
				if ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "w1" {
					t.Errorf("event %v", ev)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("no event")
			}
			etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{ts.Server.EtcdURL}, TLS: ts.Server.EtcdTLS, DialTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer etcd.Close()
			resp, err := etcd.Get(ctx(t), "/registry/"+g+"/widgets/default/w1")
			if err != nil || len(resp.Kvs) != 1 {
				t.Fatalf("the object is not at kube's key: %v %v", resp, err)
			}
			capacity := fmt.Sprintf(`apiserver_watch_cache_capacity{group=%q,resource="widgets"} 50`, g)
			metrics := string(getMetrics(t, ts))
			if has := strings.Contains(metrics, capacity); has != (g == cached) {
				t.Errorf("watch cache of %s sized 50: %v", g, has)
			}
			if g == uncached && strings.Contains(metrics, fmt.Sprintf(`apiserver_watch_cache_capacity{group=%q`, g)) {
				t.Errorf("%s has a watch cache", g)
			}
		})
	}
}

// getMetrics reads the /metrics of ts.
func getMetrics(t testing.TB, ts *testserver.TestServer) []byte {
	t.Helper()
	resp, err := ts.HTTPClient(t).Do(mustRequest(t, ts.URL+"/metrics", ts.Token))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustRequest(t testing.TB, url, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

func pollUntil(t testing.TB, cond func() bool) error {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-c.Done():
			return c.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
