package core

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

const (
	// DefaultServiceAccountName is the service account of a pod that
	// names none.
	DefaultServiceAccountName = "default"
	// EnforceMountableSecretsAnnotation, "true" on a service account,
	// limits the secrets its pods may use to those it lists.
	EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"
	// serviceAccountVolumePrefix starts the name of the volume holding the
	// API credentials ("kube-api-access-xxxxx").
	serviceAccountVolumePrefix = "kube-api-access-"
	// DefaultAPITokenMountPath is where containers find the credentials.
	DefaultAPITokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// boundTokenExpirationSeconds is the lifetime kube gives the projected
	// token (an hour and 7 seconds, so that it stands out in audits).
	boundTokenExpirationSeconds = 3607
)

// PodServiceAccount is kube's ServiceAccount admission plugin of pods.
// Admit, its mutating half, is run by the pods' AdmitCreate hook, before
// the mutating webhooks as in kube (and again once they changed the pod,
// so that a container they add mounts the credentials too): a new pod gets the service account
// "default" when it names none, that account must exist, and unless the
// pod or the account says automountServiceAccountToken: false every
// init and regular container mounts the API credentials (a projected
// token, the cluster's CA and the namespace). Validate and
// ValidateEphemeralContainers, its validating half, are run by the
// admission chain after the mutating webhooks. Mirror pods (the
// kubelet's copies of static pods) are never changed, and may reference
// no service account and no secret.
type PodServiceAccount struct {
	// ServiceAccounts reads service accounts: the serviceaccounts storage.
	ServiceAccounts rest.Getter
	// Namespaces reads namespaces: a pod whose account is missing because
	// its namespace is (or is being deleted) is left to
	// NamespaceLifecycle, which kube runs first and which refuses it in
	// its own words.
	Namespaces rest.Getter
}

// Admit sets a new pod's service account and mounts its credentials, as
// kube's plugin does on create; name is the pod's name as kube's
// admission sees it (generic.RequestedName). A missing account is
// refused (403) in kube's words.
func (s PodServiceAccount) Admit(ctx context.Context, pod *corev1.Pod, name string) error {
	if isMirrorPod(pod) {
		return validateMirrorPod(pod, name)
	}
	spec := &pod.Spec
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = DefaultServiceAccountName
		// Kept in sync, as kube's defaults do.
		spec.DeprecatedServiceAccount = DefaultServiceAccountName //nolint:staticcheck // see above
	}
	sa, err := s.lookup(ctx, spec.ServiceAccountName)
	if apierrors.IsNotFound(err) && s.namespaceGone(ctx) {
		return nil
	}
	if err != nil {
		return lookupError(ctx, name, spec.ServiceAccountName, err)
	}
	if automount(sa, spec) {
		mountServiceAccountToken(spec)
	}
	if len(spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		spec.ImagePullSecrets = make([]corev1.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			spec.ImagePullSecrets[i].Name = s.Name
		}
	}
	if err := limitSecretReferences(sa, pod); err != nil {
		return podForbidden(name, err)
	}
	return nil
}

// Validate checks a new pod as the mutating webhooks left it: it names
// an account that exists, and uses only the secrets that account allows
// when it enforces mountable secrets.
func (s PodServiceAccount) Validate(ctx context.Context, pod *corev1.Pod, name string) error {
	if isMirrorPod(pod) {
		return validateMirrorPod(pod, name)
	}
	sa, err := s.podAccount(ctx, pod, name)
	if err != nil {
		return err
	}
	if err := limitSecretReferences(sa, pod); err != nil {
		return podForbidden(name, err)
	}
	return nil
}

// ValidateEphemeralContainers checks an update of pods/ephemeralcontainers:
// the pod's account must exist, and the ephemeral containers may use
// only the secrets it allows when it enforces mountable secrets. As in
// kube, a refusal of a secret is a plain error (500), not a 403.
func (s PodServiceAccount) ValidateEphemeralContainers(ctx context.Context, pod *corev1.Pod, name string) error {
	sa, err := s.podAccount(ctx, pod, name)
	if err != nil || !enforceMountableSecrets(sa) {
		return err
	}
	mountable := mountableSecrets(sa)
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i].EphemeralContainerCommon
		if err := limitEnvSecrets("ephemeral container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	return nil
}

// podAccount is the account pod names, which must exist.
func (s PodServiceAccount) podAccount(ctx context.Context, pod *corev1.Pod, name string) (*corev1.ServiceAccount, error) {
	if pod.Spec.ServiceAccountName == "" {
		return nil, podForbidden(name, fmt.Errorf("no service account specified for pod %s/%s", request.NamespaceValue(ctx), pod.Name))
	}
	sa, err := s.lookup(ctx, pod.Spec.ServiceAccountName)
	if err != nil {
		return nil, lookupError(ctx, name, pod.Spec.ServiceAccountName, err)
	}
	return sa, nil
}

// lookup reads the service account name of the request's namespace from
// the watch cache, and from etcd when the cache has not got it (it may
// not have seen an account just created), as kube's plugin reads its
// informer then the API. Missing, it is kube's NotFound of a
// "serviceaccount".
func (s PodServiceAccount) lookup(ctx context.Context, name string) (*corev1.ServiceAccount, error) {
	obj, err := s.ServiceAccounts.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = s.ServiceAccounts.Get(ctx, name, &metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
	}
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ServiceAccount), nil
}

// namespaceGone reports whether the request's namespace does not exist
// or is being deleted: kube's NamespaceLifecycle refuses the pod before
// this plugin looks for its account.
func (s PodServiceAccount) namespaceGone(ctx context.Context) bool {
	if s.Namespaces == nil {
		return false
	}
	ns := request.NamespaceValue(ctx)
	obj, err := s.Namespaces.Get(request.WithNamespace(ctx, ""), ns, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	n, ok := obj.(*corev1.Namespace)
	return err == nil && ok && n.Status.Phase == corev1.NamespaceTerminating
}

func lookupError(ctx context.Context, podName, account string, err error) error {
	return podForbidden(podName, fmt.Errorf("error looking up service account %s/%s: %w", request.NamespaceValue(ctx), account, err))
}

// podForbidden is kube's admission refusal of a pod.
func podForbidden(name string, err error) error {
	return apierrors.NewForbidden(corev1.Resource("pods"), name, err)
}

func isMirrorPod(pod *corev1.Pod) bool {
	_, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return mirror
}

// validateMirrorPod refuses a mirror pod that references a service
// account, a secret, or a service account token: a kubelet could not
// give a static pod any of them.
func validateMirrorPod(pod *corev1.Pod, name string) error {
	if pod.Spec.ServiceAccountName != "" {
		return podForbidden(name, fmt.Errorf("a mirror pod may not reference service accounts"))
	}
	if len(podspec.SecretNames(&pod.Spec)) > 0 {
		return podForbidden(name, fmt.Errorf("a mirror pod may not reference secrets"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, source := range v.Projected.Sources {
			if source.ServiceAccountToken != nil {
				return podForbidden(name, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
			}
		}
	}
	return nil
}

// automount tells whether a pod gets the API credentials: the pod's
// choice, else its account's, else yes.
func automount(sa *corev1.ServiceAccount, spec *corev1.PodSpec) bool {
	switch {
	case spec.AutomountServiceAccountToken != nil:
		return *spec.AutomountServiceAccountToken
	case sa.AutomountServiceAccountToken != nil:
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountServiceAccountToken mounts the credentials volume in every init and
// regular container that has nothing mounted at the token path yet (not
// in ephemeral containers, as kube), and adds the volume when one needs
// it. A volume the pod has already named kube-api-access-* is the one
// mounted.
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
				LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMapName},
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

// enforceMountableSecrets tells whether an account limits its pods to
// the secrets it lists.
func enforceMountableSecrets(sa *corev1.ServiceAccount) bool {
	enforce, _ := strconv.ParseBool(sa.Annotations[EnforceMountableSecretsAnnotation])
	return enforce
}

func mountableSecrets(sa *corev1.ServiceAccount) map[string]bool {
	names := make(map[string]bool, len(sa.Secrets))
	for _, s := range sa.Secrets {
		names[s.Name] = true
	}
	return names
}

// limitSecretReferences refuses, when the account enforces mountable
// secrets, a pod whose secret volumes, containers' environment or image
// pull secrets name a secret the account does not list, in kube's words
// and order (volumes, init containers, containers, pull secrets).
func limitSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	if !enforceMountableSecrets(sa) {
		return nil
	}
	mountable := mountableSecrets(sa)
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && !mountable[v.Secret.SecretName] {
			return fmt.Errorf("volume with secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	for _, group := range []struct {
		kind       string
		containers []corev1.Container
	}{{"init container", pod.Spec.InitContainers}, {"container", pod.Spec.Containers}} {
		for _, c := range group.containers {
			if err := limitEnvSecrets(group.kind, c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
				return err
			}
		}
	}
	pullable := map[string]bool{}
	for _, s := range sa.ImagePullSecrets {
		pullable[s.Name] = true
	}
	for i, ref := range pod.Spec.ImagePullSecrets {
		if !pullable[ref.Name] {
			return fmt.Errorf("imagePullSecrets[%d].name=\"%s\" is not allowed because service account %s does not reference that imagePullSecret", i, ref.Name, sa.Name)
		}
	}
	return nil
}

// limitEnvSecrets refuses a container (kind names its sort) whose
// environment takes a secret the account does not list.
func limitEnvSecrets(kind, name string, env []corev1.EnvVar, envFrom []corev1.EnvFromSource, mountable map[string]bool, account string) error {
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !mountable[e.ValueFrom.SecretKeyRef.Name] {
			return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", kind, name, e.Name, e.ValueFrom.SecretKeyRef.Name, account)
		}
	}
	for _, e := range envFrom {
		if e.SecretRef != nil && !mountable[e.SecretRef.Name] {
			return fmt.Errorf("%s %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", kind, name, e.SecretRef.Name, account)
		}
	}
	return nil
}
