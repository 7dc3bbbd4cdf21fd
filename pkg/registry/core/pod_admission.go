package core

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// kube-apiserver's default admission plugins change every new pod. In
// kube's order: LimitRanger gives it its namespace's default resources,
// the ServiceAccount plugin names its service account and mounts the API
// credentials, Priority resolves its priority from its priority class,
// DefaultTolerationSeconds lets it survive a node problem for five
// minutes, and RuntimeClass adds its runtime class's overhead and
// scheduling. miniapiserver has no chain of built-in mutating plugins:
// the pods' BeginCreate hook (admitNewPod) makes the same changes, before
// the mutating webhooks, as in kube. Unlike kube, a missing service account
// is no error: there is no controller here that would create "default" in
// each namespace.

const (
	// DefaultServiceAccountName is the service account of a pod that
	// names none.
	DefaultServiceAccountName = "default"
	// serviceAccountVolumePrefix starts the name of the volume holding the
	// API credentials ("kube-api-access-xxxxx").
	serviceAccountVolumePrefix = "kube-api-access-"
	// DefaultAPITokenMountPath is where containers find the credentials.
	DefaultAPITokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// boundTokenExpirationSeconds is the lifetime kube gives the projected
	// token (an hour and 7 seconds, so that it stands out in audits).
	boundTokenExpirationSeconds = 3607
	// defaultTolerationSeconds is how long a pod tolerates a not-ready or
	// unreachable node.
	defaultTolerationSeconds = 300
)

// PodAdmitter is a step of kube's admission of new pods that reads the
// objects of another API group: Priority (priority classes), RuntimeClass
// (runtime classes). name is the pod's name as kube's admission sees it
// (generic.RequestedName); an error is kube's Status.
type PodAdmitter interface {
	Admit(ctx context.Context, pod *corev1.Pod, name string) error
}

// admitNewPod is the pods' BeginCreate hook: the admission steps that run
// before the mutating webhooks and the strategy see a new pod, in kube's
// order.
func admitNewPod(lookups podLookups) generic.BeginCreateFunc {
	return func(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (generic.FinishFunc, error) {
		pod := obj.(*corev1.Pod)
		name := generic.RequestedName(pod)
		ranges, err := ListLimitRanges(ctx, lookups.limitRanges)
		if err != nil {
			return nil, apierrors.NewForbidden(corev1.Resource("pods"), name,
				errors.New("unable to create pods at this time because there was an error enforcing limit ranges"))
		}
		applyLimitRangeDefaults(pod, ranges)
		admitPod(ctx, pod, lookups.serviceAccounts)
		if lookups.priority != nil {
			if err := lookups.priority.Admit(ctx, pod, name); err != nil {
				return nil, err
			}
		}
		addDefaultTolerations(&pod.Spec)
		if lookups.runtimeClass != nil {
			if err := lookups.runtimeClass.Admit(ctx, pod, name); err != nil {
				return nil, err
			}
		}
		return func(context.Context, bool) {}, nil
	}
}

// admitPod applies the ServiceAccount plugin's changes to a pod being
// created. serviceAccounts reads service accounts when that resource is
// served.
func admitPod(ctx context.Context, pod *corev1.Pod, serviceAccounts rest.Getter) {
	// Mirror pods (created by kubelets for static pods) are left alone.
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		admitServiceAccount(ctx, pod, serviceAccounts)
	}
}

func admitServiceAccount(ctx context.Context, pod *corev1.Pod, serviceAccounts rest.Getter) {
	spec := &pod.Spec
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = DefaultServiceAccountName
		spec.DeprecatedServiceAccount = DefaultServiceAccountName //nolint:staticcheck // kept in sync, as kube does
	}
	var sa *corev1.ServiceAccount
	if serviceAccounts != nil {
		if obj, err := serviceAccounts.Get(ctx, spec.ServiceAccountName, &metav1.GetOptions{}); err == nil {
			sa, _ = obj.(*corev1.ServiceAccount)
		}
	}
	automount := true
	switch {
	case spec.AutomountServiceAccountToken != nil:
		automount = *spec.AutomountServiceAccountToken
	case sa != nil && sa.AutomountServiceAccountToken != nil:
		automount = *sa.AutomountServiceAccountToken
	}
	if automount {
		mountServiceAccountToken(spec)
	}
	if len(spec.ImagePullSecrets) == 0 && sa != nil && len(sa.ImagePullSecrets) > 0 {
		spec.ImagePullSecrets = make([]corev1.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			spec.ImagePullSecrets[i].Name = s.Name
		}
	}
}

// mountServiceAccountToken mounts the credentials volume in every init and
// regular container that has nothing mounted at the token path yet, and
// adds the volume when one needs it.
func mountServiceAccountToken(spec *corev1.PodSpec) {
	volumeName := ""
	for _, v := range spec.Volumes {
		if strings.HasPrefix(v.Name, serviceAccountVolumePrefix) {
			volumeName = v.Name
			break
		}
	}
	hasVolume := volumeName != ""
	if !hasVolume {
		volumeName = serviceAccountVolumePrefix + utilrand.String(5)
	}
	mount := corev1.VolumeMount{Name: volumeName, ReadOnly: true, MountPath: DefaultAPITokenMountPath}
	needsVolume := false
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			if !mountsPath(containers[i].VolumeMounts, DefaultAPITokenMountPath) {
				containers[i].VolumeMounts = append(containers[i].VolumeMounts, mount)
				needsVolume = true
			}
		}
	}
	if !hasVolume && needsVolume {
		spec.Volumes = append(spec.Volumes, corev1.Volume{
			Name:         volumeName,
			VolumeSource: corev1.VolumeSource{Projected: tokenVolumeSource()},
		})
	}
}

func mountsPath(mounts []corev1.VolumeMount, path string) bool {
	for _, m := range mounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// tokenVolumeSource is the projected volume of the API credentials: a
// bound token, the cluster's CA and the pod's namespace.
func tokenVolumeSource() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(corev1.ProjectedVolumeSourceDefaultMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Path: "token", ExpirationSeconds: ptr.To[int64](boundTokenExpirationSeconds),
			}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{
				Items: []corev1.DownwardAPIVolumeFile{{
					Path:     "namespace",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
				}},
			}},
		},
	}
}

// addDefaultTolerations lets a pod stay 300s on a node that turned not
// ready or unreachable, unless it tolerates those taints already.
func addDefaultTolerations(spec *corev1.PodSpec) {
	notReady, unreachable := false, false
	for _, t := range spec.Tolerations {
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if (t.Key == corev1.TaintNodeNotReady || t.Key == "") && noExecute {
			notReady = true
		}
		if (t.Key == corev1.TaintNodeUnreachable || t.Key == "") && noExecute {
			unreachable = true
		}
	}
	for _, missing := range []struct {
		key string
		add bool
	}{{corev1.TaintNodeNotReady, !notReady}, {corev1.TaintNodeUnreachable, !unreachable}} {
		if missing.add {
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
				Key: missing.key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr.To[int64](defaultTolerationSeconds),
			})
		}
	}
}
