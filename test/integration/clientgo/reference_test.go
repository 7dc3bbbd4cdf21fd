package clientgo

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// emulateControllers creates in a namespace of the reference, which runs
// no controller manager, what kube's controllers (and this server) put
// in every namespace.
func emulateControllers(t testing.TB, ns string) {
	t.Helper()
	cs := clientset(t)
	manager := metav1.CreateOptions{FieldManager: "kube-controller-manager"}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, manager); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, manager); err != nil {
		t.Fatal(err)
	}
}

// cleanReference deletes a test namespace of the reference, which
// finishes no deletion by itself: what the namespace holds first (its
// finalizers removed), then the namespace, finalized; and the
// cluster-scoped objects the tests made.
func cleanReference(t testing.TB, ns string) {
	c := context.Background()
	dyn := dynamic.NewForConfigOrDie(config())
	lists, err := kubernetes.NewForConfigOrDie(srv.ClientConfig).Discovery().ServerPreferredResources()
	if err != nil {
		t.Error(err)
		return
	}
	zero := int64(0)
	clean := func(client dynamic.ResourceInterface, keep func(name string) bool) {
		items, err := client.List(c, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, item := range items.Items {
			if !keep(item.GetName()) {
				continue
			}
			if len(item.GetFinalizers()) > 0 {
				client.Patch(c, item.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}) //nolint:errcheck // best effort
			}
			client.Delete(c, item.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &zero}) //nolint:errcheck // best effort
		}
	}
	for _, list := range lists {
		gv, _ := schema.ParseGroupVersion(list.GroupVersion)
		for _, r := range list.APIResources {
			if !strings.Contains(strings.Join(r.Verbs, ","), "delete") || r.Name == "namespaces" {
				continue
			}
			client := dyn.Resource(gv.WithResource(r.Name))
			if r.Namespaced {
				clean(client.Namespace(ns), func(string) bool { return true })
			} else {
				clean(client, func(name string) bool { return strings.HasPrefix(name, ns) || strings.HasPrefix(name, "clientgo-") })
			}
		}
	}
	cs := clientset(t)
	cs.CoreV1().Namespaces().Delete(c, ns, metav1.DeleteOptions{})                                                           //nolint:errcheck // best effort
	cs.CoreV1().Namespaces().Finalize(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.UpdateOptions{}) //nolint:errcheck // best effort
}
