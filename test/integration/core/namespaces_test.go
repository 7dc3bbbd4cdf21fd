package core

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNamespaceDiscovery(t *testing.T) {
	r := do(t, http.MethodGet, "/api/v1", nil)
	var list metav1.APIResourceList
	r.decode(t, &list)
	verbs := map[string]string{}
	for _, res := range list.APIResources {
		verbs[res.Name] = strings.Join(res.Verbs, ",")
	}
	want := map[string]string{
		"namespaces":          "create,delete,get,list,patch,update,watch",
		"namespaces/finalize": "update",
		"namespaces/status":   "get,patch,update",
	}
	for name, w := range want {
		if verbs[name] != w {
			t.Errorf("%s verbs %q, want %q", name, verbs[name], w)
		}
	}
	cases := []struct{ method, path string }{
		{http.MethodDelete, "/api/v1/namespaces"},
		{http.MethodGet, "/api/v1/namespaces/default/finalize"},
		{http.MethodPatch, "/api/v1/namespaces/default/finalize"},
	}
	for _, tc := range cases {
		if r := do(t, tc.method, tc.path, "{}", "Content-Type: application/merge-patch+json"); r.code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d %s, want 405", tc.method, tc.path, r.code, r.body)
		}
	}
}

// TestNamespaceDefaults checks what every namespace starts with, as
// kube's controllers make it: the "default" ServiceAccount and the
// ConfigMap kube-root-ca.crt holding the server's CA.
func TestNamespaceDefaults(t *testing.T) {
	ctx := context.Background()
	client := clientset(t)
	check := func(t *testing.T, ns string) {
		t.Helper()
		if _, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Errorf("%s: service account default: %v", ns, err)
		}
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil || cm.Data["ca.crt"] != string(srv.Server.CAPEM) || !strings.HasPrefix(cm.Annotations["kubernetes.io/description"], "Contains a CA bundle") {
			t.Errorf("%s: kube-root-ca.crt: %v %+v", ns, err, cm)
		}
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		check(t, ns)
	}
	check(t, namespace(t))

	// A dry run creates nothing.
	dry := "dry-run-namespace" // never stored
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dry}},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if sas, err := client.CoreV1().ServiceAccounts(dry).List(ctx, metav1.ListOptions{}); err != nil || len(sas.Items) != 0 {
		t.Errorf("dry run: %v %v", err, sas)
	}
}

func TestNamespaceFinalize(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	client := clientset(t)
	if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("after delete: %v %+v", err, got)
	}
	got.Spec.Finalizers = nil
	if _, err := client.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
		t.Errorf("the namespace is still there after finalize")
	}
}
