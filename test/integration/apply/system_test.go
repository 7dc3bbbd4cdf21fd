package apply

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServerWrites checks the managed fields of what the server creates
// itself, as kube-apiserver v1.37 shows them: its own writes are
// "kube-apiserver"'s, what kube's controllers would create
// "kube-controller-manager"'s.
func TestServerWrites(t *testing.T) {
	cs := clientset(t)
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		ns, err := cs.CoreV1().Namespaces().Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantFields(t, entry(t, ns, "kube-apiserver", ""), `{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`)
	}
	svc, err := cs.CoreV1().Services("default").Get(ctx(t), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantFields(t, entry(t, svc, "kube-apiserver", ""), `{"f:metadata":{"f:labels":{".":{},"f:component":{},"f:provider":{}}},`+
		`"f:spec":{"f:clusterIP":{},"f:internalTrafficPolicy":{},"f:ipFamilyPolicy":{},"f:ports":{".":{},`+
		`"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}`)

	ns := newNamespace(t, "server-writes")
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx(t), "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantFields(t, entry(t, cm, "kube-controller-manager", ""),
		`{"f:data":{".":{},"f:ca.crt":{}},"f:metadata":{"f:annotations":{".":{},"f:kubernetes.io/description":{}}}}`)
	// The default service account is only a name: no one owns a field.
	sa, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx(t), "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sa.ManagedFields != nil {
		t.Errorf("default service account: %+v", sa.ManagedFields)
	}
}
