package workloads

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// testCRUD creates, reads, lists, updates, patches and deletes one object
// of each kind through client-go.
func testCRUD(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-crud")
	for _, name := range []string{"pod-minimal", "podtemplate", "replicationcontroller", "deployment", "replicaset", "statefulset", "daemonset", "controllerrevision"} {
		t.Run(name, func(t *testing.T) {
			obj := e.createFromTestdata(t, ns, name)
			client := e.dynamic.Resource(kindResources[obj.GetKind()]).Namespace(ns)
			got, err := client.Get(ctx(t), obj.GetName(), metav1.GetOptions{})
			if err != nil || got.GetResourceVersion() != obj.GetResourceVersion() {
				t.Fatalf("get: %v", err)
			}
			list, err := client.List(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=" + obj.GetName()})
			if err != nil || len(list.Items) != 1 {
				t.Fatalf("list: %v %d items", err, len(list.Items))
			}
			got.SetLabels(map[string]string{"updated": "yes"})
			updated, err := client.Update(ctx(t), got, metav1.UpdateOptions{})
			if err != nil || updated.GetLabels()["updated"] != "yes" {
				t.Fatalf("update: %v", err)
			}
			// An update computed from an old state conflicts.
			got.SetLabels(map[string]string{"updated": "twice"})
			if _, err := client.Update(ctx(t), got, metav1.UpdateOptions{}); statusOf(t, err).Code != http.StatusConflict {
				t.Errorf("stale update: %v", err)
			}
			patched, err := client.Patch(ctx(t), obj.GetName(), types.MergePatchType, []byte(`{"metadata":{"annotations":{"patched":"yes"}}}`), metav1.PatchOptions{})
			if err != nil || patched.GetAnnotations()["patched"] != "yes" {
				t.Fatalf("patch: %v", err)
			}
			if err := client.Delete(ctx(t), obj.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := client.Get(ctx(t), obj.GetName(), metav1.GetOptions{}); statusOf(t, err).Code != http.StatusNotFound {
				t.Errorf("get after delete: %v", err)
			}
		})
	}
}

// testDeletion: what a delete without options does to each kind, as in
// kube: replication controllers orphan their pods through v1 (the orphan
// finalizer keeps them until a garbage collector runs), apps/v1 workloads
// go at once (their dependents are deleted in the background); what the
// delete answers (the object for pods and pod templates, else a Status).
func testDeletion(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-deletion")
	for _, tc := range []struct {
		testdata      string
		stays         bool
		answersObject bool
	}{
		{"replicationcontroller", true, true},
		{"deployment", false, false},
		{"replicaset", false, false},
		{"statefulset", false, false},
		{"daemonset", false, false},
		{"controllerrevision", false, false},
		{"podtemplate", false, true},
	} {
		t.Run(tc.testdata, func(t *testing.T) {
			obj := e.createFromTestdata(t, ns, tc.testdata)
			gvr := kindResources[obj.GetKind()]
			path := "/api/v1/namespaces/" + ns + "/" + gvr.Resource + "/" + obj.GetName()
			if gvr.Group != "" {
				path = "/apis/" + gvr.Group + "/" + gvr.Version + "/namespaces/" + ns + "/" + gvr.Resource + "/" + obj.GetName()
			}
			code, body := e.do(t, http.MethodDelete, path, "", nil)
			if code != http.StatusOK {
				t.Fatalf("delete: %d %s", code, body)
			}
			var answer unstructured.Unstructured
			if err := json.Unmarshal(body, &answer.Object); err != nil {
				t.Fatal(err)
			}
			if gotObject := answer.GetKind() != "Status"; gotObject != tc.answersObject {
				t.Errorf("delete answered a %s", answer.GetKind())
			}
			current, err := e.dynamic.Resource(gvr).Namespace(ns).Get(ctx(t), obj.GetName(), metav1.GetOptions{})
			if !tc.stays {
				if err == nil {
					t.Errorf("still there: %v", current.GetFinalizers())
				}
				return
			}
			if err != nil {
				t.Fatalf("gone: %v", err)
			}
			if current.GetDeletionTimestamp() == nil || !slices.Equal(current.GetFinalizers(), []string{metav1.FinalizerOrphanDependents}) || current.GetGeneration() != 2 {
				t.Errorf("deleting: timestamp %v finalizers %v generation %d", current.GetDeletionTimestamp(), current.GetFinalizers(), current.GetGeneration())
			}
			// Removing the finalizer, as the garbage collector would,
			// finishes the deletion.
			if _, err := e.dynamic.Resource(gvr).Namespace(ns).Patch(ctx(t), obj.GetName(), types.MergePatchType,
				[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.dynamic.Resource(gvr).Namespace(ns).Get(ctx(t), obj.GetName(), metav1.GetOptions{}); statusOf(t, err).Code != http.StatusNotFound {
				t.Errorf("after the finalizer: %v", err)
			}
		})
	}
}

// testTables checks the columns kubectl get shows for each kind, and the
// cells of a fresh object, as kube's printers make them.
func testTables(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-tables")
	for _, tc := range []struct {
		testdata string
		columns  string // name:type, priority 1 columns marked with *
		cells    []any  // without AGE
	}{
		{"pod-minimal", "Name:string Ready:string Status:string Restarts:string Age:string *IP:string *Node:string *Nominated Node:string *Readiness Gates:string",
			[]any{"minimal", "0/1", "Pending", "0", "<none>", "<none>", "<none>", "<none>"}},
		{"podtemplate", "Name:string Containers:string Images:string Pod Labels:string", []any{"pt", "c", "nginx:1.0", "app=a"}},
		{"replicationcontroller", "Name:string Desired:integer Current:integer Ready:integer Age:string *Containers:string *Images:string *Selector:string",
			[]any{"rc", 1.0, 0.0, 0.0, "c", "nginx:1.0", "app=a"}},
		{"deployment", "Name:string Ready:string Up-to-date:string Available:string Age:string *Containers:string *Images:string *Selector:string",
			[]any{"deploy", "0/1", 0.0, 0.0, "c", "nginx:1.0", "app=a"}},
		{"replicaset", "Name:string Desired:integer Current:integer Ready:integer Age:string *Containers:string *Images:string *Selector:string",
			[]any{"rs", 1.0, 0.0, 0.0, "c", "nginx:1.0", "app=a"}},
		{"statefulset", "Name:string Ready:string Age:string *Containers:string *Images:string", []any{"sts", "0/1", "c", "nginx:1.0"}},
		{"daemonset", "Name:string Desired:integer Current:integer Ready:integer Up-to-date:integer Available:integer Node Selector:string Age:string *Containers:string *Images:string *Selector:string",
			[]any{"ds", 0.0, 0.0, 0.0, 0.0, 0.0, "<none>", "c", "nginx:1.0", "app=a"}},
		{"controllerrevision", "Name:string Controller:string Revision:string Age:string", []any{"cr", "<none>", 3.0}},
	} {
		t.Run(tc.testdata, func(t *testing.T) {
			obj := e.createFromTestdata(t, ns, tc.testdata)
			table := e.table(t, ns, obj)
			var cols []string
			age := -1
			for i, c := range table.ColumnDefinitions {
				name := c.Name + ":" + c.Type
				if c.Priority == 1 {
					name = "*" + name
				}
				if c.Name == "Age" {
					age = i
				}
				if c.Description == "" {
					t.Errorf("column %s has no description", c.Name)
				}
				cols = append(cols, name)
			}
			if got := strings.Join(cols, " "); got != tc.columns {
				t.Errorf("columns\n got %s\nwant %s", got, tc.columns)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("%d rows", len(table.Rows))
			}
			cells := table.Rows[0].Cells
			if age >= 0 {
				cells = slices.Delete(slices.Clone(cells), age, age+1)
			}
			if !jsonEqual(cells, tc.cells) {
				t.Errorf("cells %v, want %v", cells, tc.cells)
			}
		})
	}
	t.Run("terminating pod", func(t *testing.T) {
		pods := e.client.CoreV1().Pods(ns)
		if _, err := pods.Create(ctx(t), newPod("leaving"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Bind(ctx(t), bindingTo("leaving", "node-1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx(t), "leaving", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		obj, err := e.dynamic.Resource(kindResources["Pod"]).Namespace(ns).Get(ctx(t), "leaving", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		table := e.table(t, ns, obj)
		if row := table.Rows[0]; row.Cells[2] != "Terminating" || row.Cells[6] != "node-1" {
			t.Errorf("cells %v", row.Cells)
		}
		if err := pods.Delete(ctx(t), "leaving", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("completed pod", func(t *testing.T) {
		pods := e.client.CoreV1().Pods(ns)
		p, err := pods.Create(ctx(t), newPod("done"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = "Succeeded"
		if _, err := pods.UpdateStatus(ctx(t), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		obj, err := e.dynamic.Resource(kindResources["Pod"]).Namespace(ns).Get(ctx(t), "done", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		row := e.table(t, ns, obj).Rows[0]
		if row.Cells[2] != "Succeeded" || len(row.Conditions) != 1 || row.Conditions[0].Type != metav1.RowCompleted || row.Conditions[0].Reason != "Succeeded" {
			t.Errorf("cells %v conditions %+v", row.Cells, row.Conditions)
		}
	})
}

// table gets obj as a meta.k8s.io/v1 Table, as kubectl get does.
func (e *env) table(t *testing.T, ns string, obj *unstructured.Unstructured) *metav1.Table {
	t.Helper()
	gvr := kindResources[obj.GetKind()]
	path := "/api/v1/namespaces/" + ns + "/" + gvr.Resource + "/" + obj.GetName()
	if gvr.Group != "" {
		path = "/apis/" + gvr.Group + "/v1/namespaces/" + ns + "/" + gvr.Resource + "/" + obj.GetName()
	}
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.srv.Token)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	table := &metav1.Table{}
	if err := json.NewDecoder(resp.Body).Decode(table); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("table of %s: %d %v", path, resp.StatusCode, err)
	}
	return table
}
