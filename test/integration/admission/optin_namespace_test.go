package admission

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// ownServer is a server of the test's own with o's admission options.
func ownServer(t *testing.T, opts func(*app.AdmissionOptions)) *testserver.TestServer {
	t.Helper()
	if *reference {
		t.Skip("needs a server started with the test's admission plugins")
	}
	return testserver.Start(t, func(o *app.Options) { opts(&o.Admission) })
}

// TestNamespaceAutoProvision: a create in a namespace that does not
// exist creates it (a namespace as any other, labelled with its name),
// except on a dry run, which NamespaceLifecycle then refuses.
func TestNamespaceAutoProvision(t *testing.T) {
	t.Parallel()
	ts := ownServer(t, func(o *app.AdmissionOptions) { o.EnablePlugins = []string{"NamespaceAutoProvision"} })
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	_, err := cs.CoreV1().ConfigMaps("dry").Create(ctx(t), cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	wantStatus(t, "a dry run in a missing namespace", err, http.StatusNotFound, `namespaces "dry" not found`)
	if _, err := cs.CoreV1().ConfigMaps("provisioned").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx(t), "provisioned", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the namespace was not provisioned: %v", err)
	}
	if ns.Labels[corev1.LabelMetadataName] != "provisioned" || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("provisioned namespace: labels %v, phase %q", ns.Labels, ns.Status.Phase)
	}
	if _, err := cs.CoreV1().ConfigMaps("provisioned").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a create in the provisioned namespace: %v", err)
	}
}

// TestNamespaceExists: without NamespaceLifecycle, NamespaceExists
// alone refuses writes in a namespace that does not exist.
func TestNamespaceExists(t *testing.T) {
	t.Parallel()
	ts := ownServer(t, func(o *app.AdmissionOptions) {
		o.EnablePlugins, o.DisablePlugins = []string{"NamespaceExists"}, []string{"NamespaceLifecycle"}
	})
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	_, err := cs.CoreV1().ConfigMaps("missing").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	wantStatus(t, "a create in a missing namespace", err, http.StatusNotFound, `namespaces "missing" not found`)
	ns := ts.CreateNamespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a create in an existing namespace: %v", err)
	}
}

// TestAlwaysDeny: every write and every connect is refused, reads are
// not; a generated name is not known yet when it is refused.
func TestAlwaysDeny(t *testing.T) {
	t.Parallel()
	ts := ownServer(t, func(o *app.AdmissionOptions) { o.EnablePlugins = []string{"AlwaysAdmit", "AlwaysDeny"} })
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	_, err := cs.CoreV1().ConfigMaps("default").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	wantStatus(t, "a create", err, http.StatusForbidden, `configmaps "c" is forbidden: admission control is denying all modifications`)
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "c-"}}, metav1.CreateOptions{})
	wantStatus(t, "a create with a generated name", err, http.StatusForbidden, `configmaps "c-" is forbidden: admission control is denying all modifications`)
	err = cs.CoreV1().Namespaces().Delete(ctx(t), "kube-public", metav1.DeleteOptions{})
	wantStatus(t, "a delete", err, http.StatusForbidden, `namespaces "kube-public" is forbidden: admission control is denying all modifications`)
	if _, err := cs.CoreV1().Namespaces().Get(ctx(t), "default", metav1.GetOptions{}); err != nil {
		t.Errorf("a read: %v", err)
	}
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `pods \"p\" is forbidden: admission control is denying all modifications`) {
		t.Errorf("an exec: %d %s", resp.StatusCode, body)
	}
}

// TestWebhooksSeeGenerateName: a create that asks for a generated name
// reaches the mutating webhooks before the name is generated, as in kube:
// the review names nothing and its object carries the generateName alone.
func TestWebhooksSeeGenerateName(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	configMaps := rule("", "v1", []string{"configmaps"}, admissionregistrationv1.Create)
	registerMutating(t, mutating("gen.mutating.test", w, "/mutating-gen", ns, configMaps))
	cs := clientset(t)
	eventually(t, func(int) error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
		if err == nil && len(w.calls("/mutating-gen")) == 0 {
			return errors.New("the webhook is not called yet")
		}
		return err
	})
	review := w.calls("/mutating-gen")[0].Request
	var obj corev1.ConfigMap
	if err := json.Unmarshal(review.Object.Raw, &obj); err != nil {
		t.Fatal(err)
	}
	if review.Name != "" || obj.Name != "" || obj.GenerateName != "gen-" {
		t.Errorf("the mutating review names %q, its object %q (generateName %q)", review.Name, obj.Name, obj.GenerateName)
	}
}
