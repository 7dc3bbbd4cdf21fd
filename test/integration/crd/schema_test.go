package crd

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestSchemaErrorsAsKube: what the schema refuses (types, enum, minimum,
// pattern, required, list sets and maps, CEL rules with message and
// messageExpression, transition rules), fieldValidation=Strict, and
// bodies of another version or kind, answered with kube's Status (golden
// bodies recorded from kube-apiserver v1.37.2).
func TestSchemaErrorsAsKube(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	path := fmt.Sprintf("/apis/%s/namespaces/%s/widgets", gvr.GroupVersion(), ns)
	body := func(apiVersion, kind, name, spec string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q},"spec":%s}`, apiVersion, kind, name, spec))
	}
	v1 := gvr.GroupVersion().String()
	if code, out := do(t, http.MethodPost, path, "application/json", body(v1, "Widget", "w1", `{"color":"red"}`)); code != http.StatusCreated {
		t.Fatalf("creating w1: %d %s", code, out)
	}
	cases := []struct {
		name, method, path, contentType string
		body                            []byte
		code                            int
	}{
		{"cr-schema-errors", http.MethodPost, path, "application/json",
			body(v1, "Widget", "w2", `{"color":"pink","replicas":-1,"size":"big","tags":["a","a"],"ports":[{"name":"a"},{"name":"a"}],"quantity":true}`), 422},
		{"cr-required", http.MethodPost, path, "application/json", body(v1, "Widget", "w3", `{"replicas":"two"}`), 422},
		{"cr-rule-message-expression", http.MethodPost, path, "application/json", body(v1, "Widget", "w4", `{"color":"red","replicas":20}`), 422},
		{"cr-rule-message", http.MethodPost, path, "application/json", body(v1, "Widget", "w5-with-a-rather-long-name", `{"color":"red"}`), 422},
		{"cr-transition-rule", http.MethodPatch, path + "/w1", "application/merge-patch+json", []byte(`{"spec":{"color":"blue"}}`), 422},
		{"cr-strict-unknown-fields", http.MethodPost, path + "?fieldValidation=Strict", "application/json",
			[]byte(fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":"w6","bogus":1},"spec":{"color":"red","shape":"round"},"extra":true}`, v1)), 400},
		{"cr-strict-duplicate-fields", http.MethodPost, path + "?fieldValidation=Strict", "application/json",
			body(v1, "Widget", "w7", `{"color":"red","color":"blue"}`), 400},
		{"cr-strict-patch", http.MethodPatch, path + "/w1?fieldValidation=Strict", "application/merge-patch+json", []byte(`{"spec":{"shape":"round"}}`), 422},
		{"cr-other-version", http.MethodPost, path, "application/json", body(gvr.Group+"/v9", "Widget", "w8", `{"color":"red"}`), 400},
		{"cr-other-kind", http.MethodPost, path, "application/json", body(v1, "Gadget", "w9", `{"color":"red"}`), 422},
		{"cr-no-kind", http.MethodPost, path, "application/json", []byte(fmt.Sprintf(`{"metadata":{"name":"w10"},"apiVersion":%q}`, v1)), 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := do(t, tc.method, tc.path, tc.contentType, tc.body)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, out)
			}
			if tc.name == "cr-strict-patch" {
				// The message shows the whole patched object, its times
				// and uid included: compare the reason and the end.
				if !strings.Contains(string(out), `strict decoding error: unknown field \"spec.shape\"`) {
					t.Errorf("body %s", out)
				}
				return
			}
			checkGolden(t, tc.name, out, gvr.Group, ns)
		})
	}
}

// TestPruningAndFieldValidation: what the schema does not declare is
// dropped (but under x-kubernetes-preserve-unknown-fields, and embedded
// resources keep their object shape), with a warning per field by
// default, silently with Ignore; nulls the schema does not allow go.
func TestPruningAndFieldValidation(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	path := fmt.Sprintf("/apis/%s/namespaces/%s/widgets", gvr.GroupVersion(), ns)
	w := fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":"w1","bogus":1},"top":1,`+
		`"spec":{"color":"red","color":"green","shape":"round","size":null,"nullableThing":null,"extra":{"any":{"deep":1}},`+
		`"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","bogus":2},"spec":{}}}}`, gvr.GroupVersion())
	r := send(t, http.MethodPost, path, "application/json", []byte(w))
	if r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	want := []string{`duplicate field "spec.color"`, `unknown field "metadata.bogus"`, `unknown field "spec.shape"`, `unknown field "spec.template.metadata.bogus"`, `unknown field "top"`}
	if got := warningsOf(r.header); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	got, err := dyn(t).Resource(gvr).Namespace(ns).Get(ctx(t), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := got.Object["spec"].(map[string]interface{})
	for field, want := range map[string]interface{}{
		"color": "green", "nullableThing": nil, "replicas": int64(1), "maxReplicas": int64(10),
		"extra":    map[string]interface{}{"any": map[string]interface{}{"deep": int64(1)}},
		"template": map[string]interface{}{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]interface{}{"name": "p"}, "spec": map[string]interface{}{}},
	} {
		if v, ok := spec[field]; !ok || !reflect.DeepEqual(v, want) {
			t.Errorf("spec.%s = %#v (present %v), want %#v", field, v, ok, want)
		}
	}
	for _, gone := range []string{"shape", "size"} {
		if _, ok := spec[gone]; ok {
			t.Errorf("spec.%s was kept", gone)
		}
	}
	if _, ok := got.Object["top"]; ok {
		t.Error("top-level unknown field was kept")
	}
	ignored := send(t, http.MethodPost, path+"?fieldValidation=Ignore", "application/json",
		[]byte(fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":"w2"},"spec":{"color":"red","shape":"round"}}`, gvr.GroupVersion())))
	if ignored.code != http.StatusCreated || len(warningsOf(ignored.header)) != 0 || strings.Contains(string(ignored.body), "shape") {
		t.Errorf("Ignore: %d, warnings %q, %s", ignored.code, warningsOf(ignored.header), ignored.body)
	}
}

// TestDefaulting: the schema's defaults are applied to what clients
// write and, when the schema gains a default, to what is read from
// storage (objects and lists, from the watch cache too), as kube does.
func TestDefaulting(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	client := dyn(t).Resource(gvr).Namespace(ns)
	created, err := client.Create(ctx(t), widget(t, gvr, "w1", "{color: red}"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); r != 1 {
		t.Errorf("replicas %d on create, want the default 1", r)
	}
	// The schema gains a field with a default: objects stored before
	// read with it.
	crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(ctx(t), "widgets."+gvr.Group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["shape"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"round"`)}}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	if _, err := crds.Update(ctx(t), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var shape string
	err = wait.PollUntilContextTimeout(ctx(t), 10*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
		got, err := client.Get(c, "w1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		shape, _, _ = unstructured.NestedString(got.Object, "spec", "shape")
		return shape == "round", nil
	})
	if err != nil {
		t.Fatalf("spec.shape %q after the schema gained its default: %v", shape, err)
	}
	list, err := client.List(ctx(t), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(list.Items[0].Object, "spec", "shape"); len(list.Items) != 1 || s != "round" {
		t.Errorf("list from the cache: %d items, spec.shape %q", len(list.Items), s)
	}
}

func warningsOf(h http.Header) []string {
	var out []string
	for _, w := range h.Values("Warning") {
		// 299 - "text"
		if text, err := strconv.Unquote(strings.TrimPrefix(w, "299 - ")); err == nil {
			out = append(out, text)
		}
	}
	slices.Sort(out)
	return out
}
