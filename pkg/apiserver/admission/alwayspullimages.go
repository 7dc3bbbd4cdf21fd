package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// AlwaysPullImages is kube's plugin of that name: every container of a
// new pod (and of an update that brings a new image) pulls its image
// always, and so do image volumes, so that a node's cached image serves
// only those who may pull it. It mutates first, and validates after the
// webhooks that nothing undid it.
type AlwaysPullImages struct{}

// Admit implements handlers.MutatingAdmission.
func (AlwaysPullImages) Admit(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, err := pullPolicyPod(a, obj)
	if pod == nil {
		return err
	}
	visitContainers(&pod.Spec, func(c *corev1.Container, _ *field.Path) { c.ImagePullPolicy = corev1.PullAlways })
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil {
			img.PullPolicy = corev1.PullAlways
		}
	}
	return nil
}

// Validate implements handlers.Admission. kube returns its refusals as
// an aggregate, which reaches the client as a 500 whose message is the
// Forbidden's (or the list of them): the same here.
func (AlwaysPullImages) Validate(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, err := pullPolicyPod(a, obj)
	if pod == nil {
		return err
	}
	var errs []error
	always := []string{string(corev1.PullAlways)}
	visitContainers(&pod.Spec, func(c *corev1.Container, p *field.Path) {
		if c.ImagePullPolicy != corev1.PullAlways {
			errs = append(errs, a.Forbidden(obj, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, always)))
		}
	})
	for i, v := range pod.Spec.Volumes {
		if v.Image != nil && v.Image.PullPolicy != corev1.PullAlways {
			p := field.NewPath("spec", "volumes").Index(i).Child("image", "pullPolicy")
			errs = append(errs, a.Forbidden(obj, field.NotSupported(p, v.Image.PullPolicy, always)))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// pullPolicyPod is the pod of a request the plugin handles: a create, or
// an update naming an image the pod did not have; nil for the others.
func pullPolicyPod(a handlers.Attributes, obj runtime.Object) (*corev1.Pod, error) {
	if a.Resource.GroupResource() != podsResource || a.Subresource != "" ||
		(a.Operation != handlers.Create && a.Operation != handlers.Update) {
		return nil, nil
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if old, ok := a.Old.(*corev1.Pod); ok && a.Operation == handlers.Update && !newImage(old, pod) {
		return nil, nil
	}
	return pod, nil
}

// newImage reports whether pod names an image old does not.
func newImage(old, pod *corev1.Pod) bool {
	images := map[string]bool{}
	visitContainers(&old.Spec, func(c *corev1.Container, _ *field.Path) { images[c.Image] = true })
	found := false
	visitContainers(&pod.Spec, func(c *corev1.Container, _ *field.Path) { found = found || !images[c.Image] })
	return found
}

// visitContainers calls visit on every container of spec with its path,
// init containers first, then containers, then ephemeral ones, as kube's
// pods.VisitContainersWithPath.
func visitContainers(spec *corev1.PodSpec, visit func(c *corev1.Container, p *field.Path)) {
	path := field.NewPath("spec")
	for i := range spec.InitContainers {
		visit(&spec.InitContainers[i], path.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		visit(&spec.Containers[i], path.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		visit((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), path.Child("ephemeralContainers").Index(i))
	}
}
