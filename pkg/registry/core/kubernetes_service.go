package core

import (
	"context"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// KubernetesServiceName is the service in "default" that names the API
// server inside the cluster (kubernetes.default.svc).
const KubernetesServiceName = "kubernetes"

// EnsureKubernetesService creates default/kubernetes if it is missing, as
// kube-apiserver's bootstrap controller does at start: a ClusterIP service
// holding the first address of the service range, port 443 ("https") to
// the API server's securePort. An existing service is left as it is (kube
// would reset its ports); no Endpoints are written (as kube with
// --endpoint-reconciler-type=none).
func EnsureKubernetesService(ctx context.Context, services rest.Creater, serviceRange netip.Prefix, securePort int) error {
	ctx = request.WithNamespace(ctx, metav1.NamespaceDefault)
	if getter, ok := services.(rest.Getter); ok {
		// Kept from an earlier start: creating it again would first try to
		// take its address, which it holds.
		if _, err := getter.Get(ctx, KubernetesServiceName, &metav1.GetOptions{}); err == nil {
			return nil
		}
	}
	if !serviceRange.IsValid() {
		serviceRange = DefaultServiceClusterIPRange
	}
	single := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: KubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"provider": "kubernetes", "component": "apiserver"},
		},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443,
				TargetPort: intstr.FromInt32(int32(securePort))}},
			ClusterIP:       serviceRange.Masked().Addr().Next().String(),
			IPFamilyPolicy:  &single,
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
	// Created as kube-apiserver creates it, by its own client.
	creater := fieldmanager.TrackingCreater(services, SchemeGroupVersion.WithKind("Service"), "kube-apiserver")
	if _, err := creater.Create(ctx, svc, nil, &metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
