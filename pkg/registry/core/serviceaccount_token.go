package core

import (
	"context"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// TokenIssuer configures the TokenRequest API (serviceaccounts/token).
type TokenIssuer struct {
	Signer *serviceaccount.Signer
	// APIAudiences are the audiences of a token that asks for none, and
	// the API's own (kube's --api-audiences).
	APIAudiences []string
	// MaxExpiration shortens longer requests, with a warning (0: none).
	MaxExpiration time.Duration
	// ExtendExpiration makes the 3607 s tokens kubelet asks for its pods
	// valid a year, warning after their requested time, as kube does.
	ExtendExpiration bool
}

// kube's bounds and defaults of token lifetimes.
const (
	minTokenSeconds          = 10 * 60
	maxTokenSeconds          = 1 << 32
	defaultTokenSeconds      = 60 * 60
	warnOnlyTokenSeconds     = 60*60 + 7
	extendedTokenExpiration  = 365 * 24 * time.Hour
	issuedCredentialIDAnnKey = "authentication.kubernetes.io/issued-credential-id"
)

var tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// TokenREST serves serviceaccounts/token: a token of the service account
// the URL names, for the audiences and time asked, bound to a pod,
// secret or node when asked (it is then valid only while that object
// exists with the same UID).
type TokenREST struct {
	storeless[authenticationv1.TokenRequest, *authenticationv1.TokenRequest]
	issuer  TokenIssuer
	objects tokenObjects
}

// tokenObjects are the stores a TokenREST reads: the service accounts,
// and the objects a token may be bound to.
type tokenObjects struct {
	serviceAccounts, pods, secrets, nodes rest.Getter
}

var (
	_ rest.Creater                  = (*TokenREST)(nil)
	_ rest.Scoper                   = (*TokenREST)(nil)
	_ rest.GroupVersionKindProvider = (*TokenREST)(nil)
)

// GroupVersionKind implements rest.GroupVersionKindProvider.
func (r *TokenREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return tokenRequestKind
}

// Create implements rest.Creater, as kube's TokenREST.Create.
func (r *TokenREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest: %T", obj))
	}
	name, namespace := "", request.NamespaceValue(ctx)
	if info, ok := request.InfoFrom(ctx); ok {
		name = info.Name
	}
	if err := checkTokenRequestMeta(req, name, namespace); err != nil {
		return nil, err
	}
	sa, err := r.serviceAccount(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if req.UID != "" && req.UID != sa.UID {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: tokenRequestKind.Group, Resource: tokenRequestKind.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = slices.Clone(r.issuer.APIAudiences)
	}
	if req.Spec.ExpirationSeconds == nil {
		d := int64(defaultTokenSeconds)
		req.Spec.ExpirationSeconds = &d
	}
	req.Name, req.Namespace, req.UID = sa.Name, sa.Namespace, sa.UID
	now := time.Now()
	req.CreationTimestamp = metav1.NewTime(now)
	req.Status = authenticationv1.TokenRequestStatus{}
	if errs := validateTokenRequest(req); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestKind.GroupKind(), "", errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, req.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	binding := serviceaccount.Binding{Namespace: namespace, ServiceAccount: serviceaccount.Ref{Name: sa.Name, UID: string(sa.UID)}}
	boundToPod, err := r.bind(ctx, &binding, req.Spec.BoundObjectRef, name)
	if err != nil {
		return nil, err
	}
	return r.issue(ctx, req, binding, boundToPod, now)
}

// checkTokenRequestMeta: a name or namespace in the body must be the URL's.
func checkTokenRequestMeta(req *authenticationv1.TokenRequest, name, namespace string) error {
	if req.Name != "" && req.Name != name {
		return apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("name"), req.Name, "must match the service account name if specified")})
	}
	if req.Namespace != "" && req.Namespace != namespace {
		return apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	return nil
}

func (r *TokenREST) serviceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	obj, err := r.objects.serviceAccounts.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ServiceAccount), nil
}

// validateTokenRequest is kube's validation of a TokenRequest.
func validateTokenRequest(req *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec")
	seconds := *req.Spec.ExpirationSeconds
	if seconds < minTokenSeconds {
		errs = append(errs, field.Invalid(path.Child("expirationSeconds"), seconds, "may not specify a duration less than 10 minutes"))
	}
	if seconds > maxTokenSeconds {
		errs = append(errs, field.Invalid(path.Child("expirationSeconds"), seconds, "may not specify a duration larger than 2^32 seconds"))
	}
	if len(req.Spec.Attestations) != 0 {
		return field.ErrorList{field.Invalid(path.Child("attestations"), req.Spec.Attestations, "attestations may only be specified with a webhook bound object reference")}
	}
	return errs
}

// bind records in b the object ref names, checked as kube does: it must
// exist, have the UID given (if any), and a pod must run as the service
// account. It reports whether the token is bound to a pod.
func (r *TokenREST) bind(ctx context.Context, b *serviceaccount.Binding, ref *authenticationv1.BoundObjectReference, saName string) (bool, error) {
	if ref == nil {
		return false, nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if gvk.Group != "" || (gvk.Kind != "Pod" && gvk.Kind != "Secret" && gvk.Kind != "Node") {
		return false, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	var uid string
	switch gvk.Kind {
	case "Pod":
		obj, err := r.objects.pods.Get(ctx, ref.Name, &metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod := obj.(*corev1.Pod)
		if saName != pod.Spec.ServiceAccountName {
			return false, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", saName))
		}
		uid = string(pod.UID)
		b.Pod = &serviceaccount.Ref{Name: pod.Name, UID: uid}
		if pod.Spec.NodeName != "" {
			b.Node = r.podNode(ctx, pod.Spec.NodeName)
		}
	case "Secret":
		obj, err := r.objects.secrets.Get(ctx, ref.Name, &metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		uid = string(obj.(*corev1.Secret).UID)
		b.Secret = &serviceaccount.Ref{Name: ref.Name, UID: uid}
	case "Node":
		obj, err := r.objects.nodes.Get(request.WithNamespace(ctx, ""), ref.Name, &metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		uid = string(obj.(*corev1.Node).UID)
		b.Node = &serviceaccount.Ref{Name: ref.Name, UID: uid}
	}
	if ref.UID != "" && string(ref.UID) != uid {
		return false, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return gvk.Kind == "Pod", nil
}

// podNode names the node a pod runs on, for the token's information (a
// node that is gone is named without a UID).
func (r *TokenREST) podNode(ctx context.Context, name string) *serviceaccount.Ref {
	nodes := r.objects.nodes
	ctx = request.WithNamespace(ctx, "")
	obj, err := nodes.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		obj, err = nodes.Get(ctx, name, &metav1.GetOptions{})
	}
	if err != nil {
		return &serviceaccount.Ref{Name: name}
	}
	return &serviceaccount.Ref{Name: name, UID: string(obj.(*corev1.Node).UID)}
}

// issue signs the token and returns the request with its status.
func (r *TokenREST) issue(ctx context.Context, req *authenticationv1.TokenRequest, b serviceaccount.Binding, boundToPod bool, now time.Time) (runtime.Object, error) {
	seconds := *req.Spec.ExpirationSeconds
	if max := int64(r.issuer.MaxExpiration / time.Second); max > 0 && seconds > max {
		request.AddWarning(ctx, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", seconds, max))
		seconds = max
		req.Spec.ExpirationSeconds = &seconds
	}
	exp, warnAfter := time.Duration(seconds)*time.Second, time.Duration(0)
	if r.issuer.ExtendExpiration && boundToPod && seconds == warnOnlyTokenSeconds && slices.Equal(req.Spec.Audiences, r.issuer.APIAudiences) {
		warnAfter, exp = exp, extendedTokenExpiration
	}
	public, private := serviceaccount.Claims(b, req.Spec.Audiences, exp, warnAfter, now)
	token, err := r.issuer.Signer.Sign(public, private)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %v", err))
	}
	out := req.DeepCopy()
	out.TypeMeta = metav1.TypeMeta{Kind: tokenRequestKind.Kind, APIVersion: tokenRequestKind.GroupVersion().String()}
	out.Status = authenticationv1.TokenRequestStatus{
		Token:               token,
		ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(seconds) * time.Second)),
	}
	request.AddAuditAnnotation(ctx, issuedCredentialIDAnnKey, "JTI="+public.ID)
	return out, nil
}
