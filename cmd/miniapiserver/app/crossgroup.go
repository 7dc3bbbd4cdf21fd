package app

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
	storagegroup "github.com/miniapiserver/miniapiserver/pkg/registry/storage"
)

// crossGroupAdmission is core.CrossGroupAdmission over the storages of
// scheduling.k8s.io, node.k8s.io and storage.k8s.io, which are built
// after core's: buildGroups wires them before the server serves. A group
// not served leaves its plugin out, as kube's plugins do nothing without
// their objects.
type crossGroupAdmission struct {
	priority     *scheduling.PodPriority
	runtimeClass *node.PodRuntimeClass
	claims       *storagegroup.ClaimDefaulter
}

var _ core.CrossGroupAdmission = (*crossGroupAdmission)(nil)

// wire takes the storages the plugins read from the built groups.
func (a *crossGroupAdmission) wire(groups []rest.APIGroupInfo) {
	if s, ok := groupStorage(groups, schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")).(scheduling.PriorityClassReader); ok {
		a.priority = &scheduling.PodPriority{Classes: s}
	}
	if s, ok := groupStorage(groups, nodev1.SchemeGroupVersion.WithResource("runtimeclasses")).(rest.Getter); ok {
		a.runtimeClass = &node.PodRuntimeClass{Classes: s}
	}
	if s, ok := groupStorage(groups, storagev1.SchemeGroupVersion.WithResource("storageclasses")).(rest.Lister); ok {
		a.claims = &storagegroup.ClaimDefaulter{Classes: s}
	}
}

func (a *crossGroupAdmission) AdmitPodPriority(ctx context.Context, pod *corev1.Pod, name string) error {
	if a.priority == nil {
		return nil
	}
	return a.priority.AdmitCreate(ctx, pod, name)
}

func (a *crossGroupAdmission) KeepPodPriority(pod, old *corev1.Pod) {
	if a.priority != nil {
		scheduling.AdmitUpdate(pod, old)
	}
}

func (a *crossGroupAdmission) AdmitPodRuntimeClass(ctx context.Context, pod *corev1.Pod, name string) error {
	if a.runtimeClass == nil {
		return nil
	}
	return a.runtimeClass.Admit(ctx, pod, name)
}

func (a *crossGroupAdmission) AdmitClaimStorageClass(ctx context.Context, pvc *corev1.PersistentVolumeClaim, name string) error {
	if a.claims == nil {
		return nil
	}
	return a.claims.Admit(ctx, pvc, name)
}
