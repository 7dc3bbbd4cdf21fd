package crd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// namespace creates a namespace of the test's own.
func namespace(t testing.TB) string {
	t.Helper()
	if !*reference {
		return srv.CreateNamespace(t)
	}
	name := testserver.NamespaceName(t)
	name = fmt.Sprintf("%s-%d", strings.TrimRight(name[:min(len(name), 50)], "-"), time.Now().UnixNano()%1e6)
	if _, err := clientset(t).CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// crdFromFile reads testdata/<file>, a definition whose group is GROUP,
// in group.
func crdFromFile(t testing.TB, file, group string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(string(data), "GROUP", group)), crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return crd
}

// widgets is the definition of testdata/widgets.yaml, established, in a
// group of the test's own; it returns the resource of its v1.
func widgets(t testing.TB) schema.GroupVersionResource {
	t.Helper()
	crd := createEstablished(t, crdFromFile(t, "widgets.yaml", group(t)))
	return schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "widgets"}
}

func dyn(t testing.TB) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(config())
}

// object parses a custom resource written in YAML (or JSON).
func object(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// widget is a Widget of gvr named name, with spec given as YAML.
func widget(t testing.TB, gvr schema.GroupVersionResource, name, spec string) *unstructured.Unstructured {
	t.Helper()
	u := object(t, "spec: "+spec)
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind("Widget")
	u.SetName(name)
	return u
}

// checkGolden compares a JSON body with testdata/<name>.json, after
// naming the test's group GROUP and its namespace NAMESPACE; -update
// rewrites the file (run with -reference to record kube's).
func checkGolden(t testing.TB, name string, body []byte, group, ns string) {
	t.Helper()
	s := strings.ReplaceAll(string(body), group, "GROUP")
	if ns != "" {
		s = strings.ReplaceAll(s, ns, "NAMESPACE")
	}
	file := filepath.Join("testdata", name+".json")
	if *update {
		var v interface{}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v: %s", name, err, s)
		}
		out, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(file, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (record it with -reference -update)", err)
	}
	var g, w interface{}
	if err := json.Unmarshal([]byte(s), &g); err != nil {
		t.Fatalf("%s: body is no JSON: %v: %s", name, err, s)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(canonicalStatus(g), canonicalStatus(w)) {
		t.Errorf("%s differs from %s:\n got: %s\nwant: %s", name, file, s, want)
	}
}

// canonicalStatus orders the causes of a Status, which kube's schema
// validator finds in map order, and its message accordingly.
func canonicalStatus(v interface{}) interface{} {
	status, ok := v.(map[string]interface{})
	if !ok {
		return v
	}
	details, _ := status["details"].(map[string]interface{})
	causes, _ := details["causes"].([]interface{})
	if len(causes) < 2 {
		return v
	}
	key := func(c interface{}) string {
		m, _ := c.(map[string]interface{})
		return fmt.Sprint(m["field"], m["message"])
	}
	sort.Slice(causes, func(i, j int) bool { return key(causes[i]) < key(causes[j]) })
	if msg, ok := status["message"].(string); ok {
		if i := strings.Index(msg, ": ["); i >= 0 {
			parts := strings.Split(strings.TrimSuffix(msg[i+3:], "]"), ", ")
			sort.Strings(parts)
			status["message"] = msg[:i] + ": " + strings.Join(parts, ", ")
		}
	}
	return status
}

func decodeJSON(data []byte, into interface{}) error { return json.Unmarshal(data, into) }

func encodeJSON(t testing.TB, v interface{}) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
