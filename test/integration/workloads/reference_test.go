package workloads

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// testDiscovery checks the discovery entries of the workload resources
// against kube's (kubectl's short names and "all" rely on them).
func testDiscovery(t *testing.T, e *env) {
	type entry struct {
		Namespaced bool
		Kind       string
		Group      string
		Verbs      []string
		ShortNames []string
		Categories []string
		Singular   string
	}
	crud := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	sub := []string{"get", "patch", "update"}
	// As kube-apiserver v1.37.2 lists them.
	want := map[string]map[string]entry{
		"v1": {
			"bindings":                      {true, "Binding", "", []string{"create"}, nil, nil, "binding"},
			"pods":                          {true, "Pod", "", crud, []string{"po"}, []string{"all"}, "pod"},
			"pods/binding":                  {true, "Binding", "", []string{"create"}, nil, nil, ""},
			"pods/status":                   {true, "Pod", "", sub, nil, nil, ""},
			"podtemplates":                  {true, "PodTemplate", "", crud, nil, nil, "podtemplate"},
			"replicationcontrollers":        {true, "ReplicationController", "", crud, []string{"rc"}, []string{"all"}, "replicationcontroller"},
			"replicationcontrollers/scale":  {true, "Scale", "autoscaling", sub, nil, nil, ""},
			"replicationcontrollers/status": {true, "ReplicationController", "", sub, nil, nil, ""},
		},
		"apps/v1": {
			"controllerrevisions": {true, "ControllerRevision", "", crud, nil, nil, "controllerrevision"},
			"daemonsets":          {true, "DaemonSet", "", crud, []string{"ds"}, []string{"all"}, "daemonset"},
			"daemonsets/status":   {true, "DaemonSet", "", sub, nil, nil, ""},
			"deployments":         {true, "Deployment", "", crud, []string{"deploy"}, []string{"all"}, "deployment"},
			"deployments/scale":   {true, "Scale", "autoscaling", sub, nil, nil, ""},
			"deployments/status":  {true, "Deployment", "", sub, nil, nil, ""},
			"replicasets":         {true, "ReplicaSet", "", crud, []string{"rs"}, []string{"all"}, "replicaset"},
			"replicasets/scale":   {true, "Scale", "autoscaling", sub, nil, nil, ""},
			"replicasets/status":  {true, "ReplicaSet", "", sub, nil, nil, ""},
			"statefulsets":        {true, "StatefulSet", "", crud, []string{"sts"}, []string{"all"}, "statefulset"},
			"statefulsets/scale":  {true, "Scale", "autoscaling", sub, nil, nil, ""},
			"statefulsets/status": {true, "StatefulSet", "", sub, nil, nil, ""},
		},
	}
	for gv, resources := range want {
		list, err := e.client.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discovery of %s: %v", gv, err)
		}
		got := map[string]metav1.APIResource{}
		for _, r := range list.APIResources {
			got[r.Name] = r
		}
		for name, w := range resources {
			t.Run(gv+"/"+name, func(t *testing.T) {
				r, ok := got[name]
				if !ok {
					t.Fatalf("%s not listed", name)
				}
				g := entry{r.Namespaced, r.Kind, r.Group, r.Verbs, r.ShortNames, r.Categories, r.SingularName}
				slices.Sort(g.Verbs)
				if !reflect.DeepEqual(g, w) {
					t.Errorf("got %+v, want %+v", g, w)
				}
			})
		}
	}
}

var (
	kindResources = map[string]schema.GroupVersionResource{
		"Pod":                   {Version: "v1", Resource: "pods"},
		"PodTemplate":           {Version: "v1", Resource: "podtemplates"},
		"ReplicationController": {Version: "v1", Resource: "replicationcontrollers"},
		"Deployment":            {Group: "apps", Version: "v1", Resource: "deployments"},
		"ReplicaSet":            {Group: "apps", Version: "v1", Resource: "replicasets"},
		"StatefulSet":           {Group: "apps", Version: "v1", Resource: "statefulsets"},
		"DaemonSet":             {Group: "apps", Version: "v1", Resource: "daemonsets"},
		"ControllerRevision":    {Group: "apps", Version: "v1", Resource: "controllerrevisions"},
	}
	randomVolumeName = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
	transitionTime   = regexp.MustCompile(`"lastTransitionTime": "[^"]+"`)
)

// normalizeTimes hides condition transition times, which differ between
// runs.
func normalizeTimes(s string) string {
	return transitionTime.ReplaceAllString(s, `"lastTransitionTime": "<time>"`)
}

// normalizeObject drops what differs between two servers (identity,
// times, managed fields) and the random suffix of the service account
// volume, and prints the rest as sorted, indented JSON.
func normalizeObject(t *testing.T, obj map[string]any) string {
	t.Helper()
	if m, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
			delete(m, k)
		}
	}
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return normalizeTimes(randomVolumeName.ReplaceAllString(string(data), "kube-api-access-XXXXX")) + "\n"
}

// testDefaults creates minimal (and some fuller) objects and compares
// what the server stored, defaults included, with what kube-apiserver
// stored for the same request (testdata/defaults/*.out.json).
func testDefaults(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-defaults")
	inputs, err := filepath.Glob("testdata/defaults/*.in.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			wantData, err := os.ReadFile(strings.TrimSuffix(in, ".in.json") + ".out.json")
			if err != nil {
				t.Fatal(err)
			}
			want := normalizeTimes(string(wantData))
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			gvr, ok := kindResources[obj.GetKind()]
			if !ok {
				t.Fatalf("no resource for kind %s", obj.GetKind())
			}
			client := e.dynamic.Resource(gvr).Namespace(ns)
			created, err := client.Create(ctx(t), obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if got := normalizeObject(t, created.Object); got != want {
				t.Errorf("created %s differs from kube's: %s\ngot:\n%s", name, firstDiff(want, got), got)
			}
			// What is stored is what was answered.
			read, err := client.Get(ctx(t), obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if got := normalizeObject(t, read.Object); got != want {
				t.Errorf("stored %s differs from kube's: %s", name, firstDiff(want, got))
			}
		})
	}
}

// transcriptCase is one request of testdata/transcript.json and what
// kube-apiserver answered it: the code and, for errors, the whole Status.
type transcriptCase struct {
	Name        string          `json:"name"`
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	ContentType string          `json:"contentType"`
	Body        json.RawMessage `json:"body"`
	Want        struct {
		Code   int            `json:"code"`
		Status map[string]any `json:"status"`
		Kind   string         `json:"kind"`
	} `json:"want"`
}

// testTranscript replays requests recorded against kube-apiserver, in
// order in one namespace (later ones update what earlier ones created),
// and compares the answers: validation messages and causes, conflicts,
// not found, bad requests.
func testTranscript(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-transcript")
	data, err := os.ReadFile("testdata/transcript.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []transcriptCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			path := "/api/v1/namespaces/" + ns + "/" + c.Path
			if rest, ok := strings.CutPrefix(c.Path, "/apis/apps/v1/"); ok {
				path = "/apis/apps/v1/namespaces/" + ns + "/" + rest
			}
			var body []byte
			if string(c.Body) != "null" && len(c.Body) > 0 {
				body = c.Body
			}
			code, resp := e.do(t, c.Method, path, c.ContentType, body)
			if code != c.Want.Code {
				t.Fatalf("code %d, want %d: %s", code, c.Want.Code, resp)
			}
			var got map[string]any
			if err := json.Unmarshal(resp, &got); err != nil {
				t.Fatalf("answer is not JSON: %s", resp)
			}
			if c.Want.Status == nil {
				if got["kind"] != c.Want.Kind {
					t.Errorf("kind %v, want %s", got["kind"], c.Want.Kind)
				}
				return
			}
			if details, ok := got["details"].(map[string]any); ok {
				delete(details, "uid")
			}
			if !reflect.DeepEqual(got, c.Want.Status) {
				w, _ := json.MarshalIndent(c.Want.Status, "", " ")
				g, _ := json.MarshalIndent(got, "", " ")
				t.Errorf("status differs from kube's: %s", firstDiff(string(w), string(g)))
			}
		})
	}
	// The transcript leaves a bound pod behind; remove it at once.
	if code, resp := e.do(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods/p1?gracePeriodSeconds=0", "", nil); code != http.StatusOK {
		t.Errorf("deleting p1: %d %s", code, resp)
	}
}
