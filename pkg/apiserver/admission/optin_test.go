package admission

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

func newPodAttributes(op handlers.Operation, name string, old *corev1.Pod) handlers.Attributes {
	a := handlers.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "ns", Name: name,
		Kind: corev1.SchemeGroupVersion.WithKind("Pod")}
	if old != nil {
		a.Old = old
	}
	return a
}

// TestAlwaysPullImagesValidate: a container that does not pull always is
// refused with kube's message, the containers in kube's order (init,
// regular, ephemeral) and image volumes too; several refusals come as
// one aggregate (a 500, as kube's); updates without a new image and
// subresources are not looked at.
func TestAlwaysPullImagesValidate(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i", Image: "a", ImagePullPolicy: corev1.PullAlways}},
		Containers:     []corev1.Container{{Name: "c", Image: "b", ImagePullPolicy: corev1.PullIfNotPresent}},
	}}
	err := AlwaysPullImages{}.Validate(context.Background(), newPodAttributes(handlers.Create, "p", nil), pod)
	want := `pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if _, isStatus := err.(apierrors.APIStatus); isStatus {
		t.Errorf("kube answers an aggregate (a 500), got a Status: %v", err)
	}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Image: "b", ImagePullPolicy: corev1.PullNever}}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "r", PullPolicy: corev1.PullNever}}}}
	err = AlwaysPullImages{}.Validate(context.Background(), newPodAttributes(handlers.Create, "p", nil), pod)
	want = `[pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always", ` +
		`pods "p" is forbidden: spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", ` +
		`pods "p" is forbidden: spec.volumes[0].image.pullPolicy: Unsupported value: "Never": supported values: "Always"]`
	if err == nil || err.Error() != want {
		t.Errorf("got %v,\nwant %s", err, want)
	}
	if err := (AlwaysPullImages{}).Validate(context.Background(), newPodAttributes(handlers.Update, "p", pod.DeepCopy()), pod); err != nil {
		t.Errorf("an update without a new image: %v", err)
	}
	status := newPodAttributes(handlers.Create, "p", nil)
	status.Subresource = "status"
	if err := (AlwaysPullImages{}).Validate(context.Background(), status, pod); err != nil {
		t.Errorf("a subresource: %v", err)
	}
	if err := (AlwaysPullImages{}).Admit(context.Background(), newPodAttributes(handlers.Create, "p", nil), pod); err != nil {
		t.Fatal(err)
	}
	if err := (AlwaysPullImages{}).Validate(context.Background(), newPodAttributes(handlers.Create, "p", nil), pod); err != nil {
		t.Errorf("after Admit: %v", err)
	}
}

// TestAlwaysPullImagesNewImage: an update brings a new image when any
// container names one no container of the old pod did.
func TestAlwaysPullImagesNewImage(t *testing.T) {
	old := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "a"}, {Image: "b"}}}}
	for _, tc := range []struct {
		images []string
		want   bool
	}{{[]string{"b", "a"}, false}, {[]string{"a"}, false}, {[]string{"a", "c"}, true}} {
		pod := &corev1.Pod{}
		for _, img := range tc.images {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Image: img})
		}
		if got := newImage(old, pod); got != tc.want {
			t.Errorf("images %v: newImage %v, want %v", tc.images, got, tc.want)
		}
	}
}

// TestExternalIPsSubset: only external IPs the service had pass.
func TestExternalIPsSubset(t *testing.T) {
	svc := func(ips ...string) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{ExternalIPs: ips}}
	}
	for _, tc := range []struct {
		svc, old *corev1.Service
		want     bool
	}{
		{svc(), nil, true}, {svc("1.1.1.1"), nil, false}, {svc("1.1.1.1"), svc("1.1.1.1", "2.2.2.2"), true},
		{svc("1.1.1.1", "3.3.3.3"), svc("1.1.1.1"), false}, {svc(), svc("1.1.1.1"), true},
	} {
		if got := externalIPsSubset(tc.svc, tc.old); got != tc.want {
			t.Errorf("%v over %v: %v, want %v", tc.svc.Spec.ExternalIPs, tc.old, got, tc.want)
		}
	}
}

// allowOnly allows the attribute records it lists (by verb, resource,
// subresource and name) and records every question.
type allowOnly struct {
	allowed []authorizer.AttributesRecord
	asked   []authorizer.AttributesRecord
}

func (a *allowOnly) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	r := attrs.(authorizer.AttributesRecord)
	a.asked = append(a.asked, r)
	for _, ok := range a.allowed {
		if ok.Verb == r.Verb && ok.Resource == r.Resource && ok.Subresource == r.Subresource && ok.Name == r.Name && ok.Namespace == r.Namespace {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "no", errors.New("denied")
}

type kinds map[schema.GroupVersionKind]RESTMapping

func (k kinds) RESTMappings(gk schema.GroupKind, version string) ([]RESTMapping, error) {
	if m, ok := k[gk.WithVersion(version)]; ok {
		return []RESTMapping{m}, nil
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: []string{version}}
}

// TestOwnerReferencesPermissionEnforcement: which questions the plugin
// asks, of whom, and its refusals: references changed on an update take
// delete on the object; a newly blocking reference takes update on the
// owner's finalizers, in the dependent's namespace for a namespaced
// owner; a reference already blocking asks nothing; pods/status is
// exempt.
func TestOwnerReferencesPermissionEnforcement(t *testing.T) {
	ctx := request.WithUser(context.Background(), &user.DefaultInfo{Name: "u"})
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "1", BlockOwnerDeletion: ptr.To(true)}
	mapper := kinds{{Group: "apps", Version: "v1", Kind: "ReplicaSet"}: {Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, Namespaced: true}}
	withRefs := func(refs ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", OwnerReferences: refs}}
	}
	authz := &allowOnly{}
	p := &OwnerReferencesPermissionEnforcement{Authorizer: authorizer.AuthorizerFunc(authz.Authorize), Mapper: mapper}
	err := p.Validate(ctx, newPodAttributes(handlers.Create, "p", nil), withRefs(owner))
	want := `pods "p" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: no, denied`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if got := authz.asked[len(authz.asked)-1]; got.Namespace != "ns" || got.Resource != "replicasets" || got.Subresource != "finalizers" || got.Name != "rs" {
		t.Errorf("asked %+v", got)
	}
	authz.allowed = []authorizer.AttributesRecord{{Verb: "update", Resource: "replicasets", Subresource: "finalizers", Name: "rs", Namespace: "ns"}}
	if err := p.Validate(ctx, newPodAttributes(handlers.Create, "p", nil), withRefs(owner)); err != nil {
		t.Errorf("with the finalizers: %v", err)
	}
	authz.allowed, authz.asked = nil, nil
	if err := p.Validate(ctx, newPodAttributes(handlers.Update, "p", withRefs(owner)), withRefs(owner)); err != nil || len(authz.asked) != 0 {
		t.Errorf("references unchanged: %v, asked %v", err, authz.asked)
	}
	err = p.Validate(ctx, newPodAttributes(handlers.Update, "p", withRefs(owner)), withRefs())
	want = `pods "p" is forbidden: cannot set an ownerRef on a resource you can't delete: no, denied`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	status := newPodAttributes(handlers.Update, "p", withRefs())
	status.Subresource = "status"
	if err := p.Validate(ctx, status, withRefs(owner)); err != nil {
		t.Errorf("pods/status: %v", err)
	}
	notBlocking := owner
	notBlocking.BlockOwnerDeletion = nil
	if got := newBlockingRefs(withRefs(owner), withRefs(notBlocking)); len(got) != 1 {
		t.Errorf("a reference made blocking: %v", got)
	}
	if got := newBlockingRefs(withRefs(owner), withRefs(owner)); len(got) != 0 {
		t.Errorf("a reference already blocking: %v", got)
	}
}

// TestAlwaysDeny: every operation, connects included, is refused.
func TestAlwaysDeny(t *testing.T) {
	a := newPodAttributes(handlers.Delete, "p", nil)
	want := `pods "p" is forbidden: admission control is denying all modifications`
	for name, err := range map[string]error{
		"admit":         AlwaysDeny{}.Admit(context.Background(), a, nil),
		"validate":      AlwaysDeny{}.Validate(context.Background(), a, nil),
		"connect":       Chain{Steps: []Step{{"AlwaysAdmit", AlwaysAdmit{}}, {"AlwaysDeny", AlwaysDeny{}}}}.ValidateConnect(context.Background(), a, &corev1.PodExecOptions{}),
		"admit connect": Chain{Steps: []Step{{"AlwaysAdmit", AlwaysAdmit{}}, {"AlwaysDeny", AlwaysDeny{}}}}.AdmitConnect(context.Background(), a, &corev1.PodExecOptions{}),
	} {
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// TestNamespaceExists: a namespaced write in a missing namespace gets the
// namespace's NotFound; namespaces themselves and cluster objects pass.
func TestNamespaceExists(t *testing.T) {
	e := NamespaceExists{Namespaces: storedNamespaces{"there": storedNamespace(t, "there", 1, "Active")}}
	cm := handlers.Attributes{Operation: handlers.Update, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
		Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: "gone", Name: "c"}
	if err := e.Validate(context.Background(), cm, nil); !apierrors.IsNotFound(err) || err.Error() != `namespaces "gone" not found` {
		t.Errorf("missing namespace: %v", err)
	}
	cm.Namespace = "there"
	if err := e.Validate(context.Background(), cm, nil); err != nil {
		t.Errorf("existing namespace: %v", err)
	}
	ns := handlers.Attributes{Operation: handlers.Create, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"),
		Kind: corev1.SchemeGroupVersion.WithKind("Namespace"), Namespace: "gone", Name: "gone"}
	if err := e.Validate(context.Background(), ns, nil); err != nil {
		t.Errorf("a namespace: %v", err)
	}
}
