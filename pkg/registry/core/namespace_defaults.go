package core

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Names kube's controllers give the objects they put in every namespace.
const (
	// RootCAConfigMapName holds the CA that verifies the API server (kube's
	// root-ca-cert-publisher creates it).
	RootCAConfigMapName = "kube-root-ca.crt"

	// kubeControllerManager is the field manager of what kube's
	// controllers write (the start of their User-Agent).
	kubeControllerManager = "kube-controller-manager"

	rootCADescription = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// namespaceDefaults creates, in each new namespace, the objects kube's
// controller manager creates there: the "default" ServiceAccount (pods
// need it to be admitted, and users expect `kubectl get sa` to show it)
// and the "kube-root-ca.crt" ConfigMap; each only when asked (the
// provider's DefaultServiceAccounts and RootCA), since kube-apiserver
// alone creates neither.
//
// miniapiserver has no controller manager, so the namespace create path
// does it, right after the namespace is stored: the objects exist as soon
// as the create returns (in kube they follow within milliseconds). The
// system namespaces get them at startup, through the same create. Unlike
// kube's controllers this does not recreate them once deleted; and a
// failure is logged, not returned: the namespace itself was created.
type namespaceDefaults struct {
	// serviceAccounts is nil when no ServiceAccount is created.
	serviceAccounts rest.Creater
	configMaps      rest.Creater
	// rootCA is the PEM the ConfigMap holds; none is created without it.
	rootCA []byte
}

// ensure creates the defaults of namespace ns that do not exist.
func (d namespaceDefaults) ensure(ctx context.Context, ns string) {
	ctx = request.WithNamespace(context.WithoutCancel(ctx), ns)
	if d.serviceAccounts != nil {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccountName, Namespace: ns}}
		d.create(ctx, d.serviceAccounts, sa)
	}
	if d.configMaps != nil && len(d.rootCA) > 0 {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: RootCAConfigMapName, Namespace: ns,
				Annotations: map[string]string{"kubernetes.io/description": rootCADescription},
			},
			Data: map[string]string{"ca.crt": string(d.rootCA)},
		}
		d.create(ctx, d.configMaps, cm)
	}
}

func (d namespaceDefaults) create(ctx context.Context, creater rest.Creater, obj runtime.Object) {
	if _, err := creater.Create(ctx, obj, nil, &metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		slog.Error("creating a namespace's default object", "namespace", request.NamespaceValue(ctx),
			"object", fmt.Sprintf("%T", obj), "err", err)
	}
}
