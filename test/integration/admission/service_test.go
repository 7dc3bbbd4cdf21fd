package admission

import (
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestServiceReference: a webhook named by a service is called at an
// address of the service's endpoints, its certificate checked for the
// service's name (<name>.<namespace>.svc), at the path configured.
func TestServiceReference(t *testing.T) {
	t.Parallel()
	if *reference {
		t.Skip("kube calls a service at its cluster IP, which nothing routes without kube-proxy")
	}
	addr := testserver.HostAddress()
	if addr == "" {
		t.Skip("this host has no address but loopback, which Endpoints may not name")
	}
	ns := namespace(t)
	w := startWebhookServer(t, "guard."+ns+".svc")
	core := clientset(t).CoreV1()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "guard"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "https", Port: 8443, TargetPort: intstr.FromInt32(int32(w.server.Port()))}}}}
	if _, err := core.Services(ns).Create(ctx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eps := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "guard"}, Subsets: []corev1.EndpointSubset{{ //nolint:staticcheck // kube's resolver reads Endpoints
		Addresses: []corev1.EndpointAddress{{IP: addr}}, Ports: []corev1.EndpointPort{{Name: "https", Port: int32(w.server.Port())}}}}}
	if _, err := core.Endpoints(ns).Create(ctx(t), eps, metav1.CreateOptions{}); err != nil { //nolint:staticcheck // as above
		t.Fatal(err)
	}
	hook := validating("service.admission.test", w, "/deny", ns, rule("", "v1", configMaps, admissionregistrationv1.Create))
	hook.ClientConfig = admissionregistrationv1.WebhookClientConfig{CABundle: w.server.CAPEM,
		Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "guard", Port: ptr.To[int32](8443), Path: ptr.To("/deny")}}
	registerValidating(t, hook)
	eventually(t, func(i int) error {
		_, err := core.ConfigMaps(ns).Create(ctx(t), configMap(fmt.Sprintf("c%d", i), nil), metav1.CreateOptions{})
		if err == nil {
			return fmt.Errorf("the webhook never refused")
		}
		if want := `admission webhook "service.admission.test" denied the request: widgets are not welcome here`; err.Error() != want {
			t.Fatalf("refusal through a service: %v", err)
		}
		return nil
	})
}
