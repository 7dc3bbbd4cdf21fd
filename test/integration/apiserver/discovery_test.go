package apiserver

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestDiscoveryGolden checks the discovery documents against golden files
// (regenerate with go test -run TestDiscoveryGolden -update).
func TestDiscoveryGolden(t *testing.T) {
	address := regexp.MustCompile(`"serverAddress":"[^"]*"`)
	for _, path := range []string{"/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/apis/coordination.k8s.io", "/apis/coordination.k8s.io/v1",
		"/apis/rbac.authorization.k8s.io", "/apis/rbac.authorization.k8s.io/v1", "/apis/authorization.k8s.io", "/apis/authorization.k8s.io/v1"} {
		t.Run(path, func(t *testing.T) {
			r := do(t, req{path: path})
			if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %s %s", r.code, r.header.Get("Content-Type"), r.body)
			}
			got := address.ReplaceAll(r.body, []byte(`"serverAddress":"ADDRESS"`))
			var indented bytes.Buffer
			if err := json.Indent(&indented, got, "", "  "); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", "discovery"+strings.ReplaceAll(path, "/", "_")+".json")
			if *update {
				if err := os.WriteFile(file, indented.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(indented.Bytes(), want) {
				t.Errorf("%s differs from %s (run with -update if the change is meant):\n%s", path, file, indented.Bytes())
			}
		})
	}
}

// TestDiscoveryAsKube checks entries against what kube-apiserver v1.37
// serves for the same resources (hashes, verbs, names, shape).
func TestDiscoveryAsKube(t *testing.T) {
	want := map[string]string{
		"/api/v1 configmaps":                  `{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["cm"],"storageVersionHash":"qFsyl6wFWjQ="}`,
		"/api/v1 namespaces/status":           `{"name":"namespaces/status","singularName":"","namespaced":false,"kind":"Namespace","verbs":["get","patch","update"]}`,
		"/apis/apps/v1 controllerrevisions":   `{"name":"controllerrevisions","singularName":"controllerrevision","namespaced":true,"kind":"ControllerRevision","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"85nkx63pcBU="}`,
		"/apis/coordination.k8s.io/v1 leases": `{"name":"leases","singularName":"lease","namespaced":true,"kind":"Lease","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"gqkMMb/YqFM="}`,
		// One storage version, served at two versions or in two groups:
		// one hash.
		"/apis/autoscaling/v1 horizontalpodautoscalers":           `{"name":"horizontalpodautoscalers","singularName":"horizontalpodautoscaler","namespaced":true,"kind":"HorizontalPodAutoscaler","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["hpa"],"categories":["all"],"storageVersionHash":"qwQve8ut294="}`,
		"/apis/autoscaling/v1 horizontalpodautoscalers/status":    `{"name":"horizontalpodautoscalers/status","singularName":"","namespaced":true,"kind":"HorizontalPodAutoscaler","verbs":["get","patch","update"]}`,
		"/apis/autoscaling/v2 horizontalpodautoscalers":           `{"name":"horizontalpodautoscalers","singularName":"horizontalpodautoscaler","namespaced":true,"kind":"HorizontalPodAutoscaler","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["hpa"],"categories":["all"],"storageVersionHash":"qwQve8ut294="}`,
		"/apis/events.k8s.io/v1 events":                           `{"name":"events","singularName":"event","namespaced":true,"kind":"Event","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["ev"],"storageVersionHash":"r2yiGXH7wu8="}`,
		"/apis/rbac.authorization.k8s.io/v1 clusterrolebindings":  `{"name":"clusterrolebindings","singularName":"clusterrolebinding","namespaced":false,"kind":"ClusterRoleBinding","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"48tpQ8gZHFc="}`,
		"/apis/rbac.authorization.k8s.io/v1 clusterroles":         `{"name":"clusterroles","singularName":"clusterrole","namespaced":false,"kind":"ClusterRole","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"bYE5ZWDrJ44="}`,
		"/apis/rbac.authorization.k8s.io/v1 rolebindings":         `{"name":"rolebindings","singularName":"rolebinding","namespaced":true,"kind":"RoleBinding","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"eGsCzGH6b1g="}`,
		"/apis/rbac.authorization.k8s.io/v1 roles":                `{"name":"roles","singularName":"role","namespaced":true,"kind":"Role","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"7FuwZcIIItM="}`,
		"/apis/authorization.k8s.io/v1 localsubjectaccessreviews": `{"name":"localsubjectaccessreviews","singularName":"localsubjectaccessreview","namespaced":true,"kind":"LocalSubjectAccessReview","verbs":["create"]}`,
		"/apis/authorization.k8s.io/v1 selfsubjectaccessreviews":  `{"name":"selfsubjectaccessreviews","singularName":"selfsubjectaccessreview","namespaced":false,"kind":"SelfSubjectAccessReview","verbs":["create"]}`,
		"/apis/authorization.k8s.io/v1 selfsubjectrulesreviews":   `{"name":"selfsubjectrulesreviews","singularName":"selfsubjectrulesreview","namespaced":false,"kind":"SelfSubjectRulesReview","verbs":["create"]}`,
		"/apis/authorization.k8s.io/v1 subjectaccessreviews":      `{"name":"subjectaccessreviews","singularName":"subjectaccessreview","namespaced":false,"kind":"SubjectAccessReview","verbs":["create"]}`,
	}
	for key, w := range want {
		path, name, _ := strings.Cut(key, " ")
		var list metav1.APIResourceList
		do(t, req{path: path}).object(t, &list)
		found := false
		for _, res := range list.APIResources {
			if res.Name != name {
				continue
			}
			found = true
			got, _ := json.Marshal(res)
			if string(got) != w {
				t.Errorf("%s:\n got %s\nwant %s", key, got, w)
			}
		}
		if !found {
			t.Errorf("%s: not served", key)
		}
	}
	// kube's /api/v1 names no apiVersion; the groups' lists do.
	if r := do(t, req{path: "/api/v1"}); !bytes.HasPrefix(r.body, []byte(`{"kind":"APIResourceList","groupVersion":"v1",`)) {
		t.Errorf("/api/v1 starts %.80s", r.body)
	}
}
