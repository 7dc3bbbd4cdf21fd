package authorization

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// review is what the four review storages share, for their kind T:
// nothing to destroy, create as their only verb, and T's names.
type review[T any, P interface {
	*T
	runtime.Object
}] struct{}

// Destroy implements rest.Storage: nothing is stored.
func (review[T, P]) Destroy() {}

// New implements rest.Storage.
func (review[T, P]) New() runtime.Object { return P(new(T)) }

// GetSingularName implements rest.SingularNameProvider: the kind's name
// in lower case, as kube's.
func (review[T, P]) GetSingularName() string { return strings.ToLower(reflect.TypeFor[T]().Name()) }

// invalid is kube's 422 of a review: kube reports the kind of the decoded
// internal object, which is empty (".authorization.k8s.io \"\" is
// invalid").
func invalid(errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName}, "", errs)
}

// decide asks a about attrs and fills status as kube does.
func decide(ctx context.Context, a authorizer.Authorizer, attrs authorizer.AttributesRecord) authorizationv1.SubjectAccessReviewStatus {
	decision, reason, err := a.Authorize(ctx, attrs)
	return authorizationv1.SubjectAccessReviewStatus{
		Allowed:         decision == authorizer.DecisionAllow,
		Denied:          decision == authorizer.DecisionDeny,
		Reason:          reason,
		EvaluationError: evaluationError(err, attrs),
	}
}

type subjectAccessReviews struct {
	review[authorizationv1.SubjectAccessReview, *authorizationv1.SubjectAccessReview]
	authorizer authorizer.Authorizer
}

var _ rest.Creater = (*subjectAccessReviews)(nil)

func (*subjectAccessReviews) NamespaceScoped() bool { return false }

func (r *subjectAccessReviews) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SubjectAccessReview: %#v", obj))
	}
	errs := validateSubjectAccessReviewSpec(&sar.Spec)
	errs = append(errs, validateEmptyMeta(sar.ObjectMeta, false)...)
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	if err := admit(ctx, createValidation, obj); err != nil {
		return nil, err
	}
	sar.Status = decide(ctx, r.authorizer, attributesOf(&sar.Spec))
	return sar, nil
}

type localSubjectAccessReviews struct {
	review[authorizationv1.LocalSubjectAccessReview, *authorizationv1.LocalSubjectAccessReview]
	authorizer authorizer.Authorizer
}

var _ rest.Creater = (*localSubjectAccessReviews)(nil)

func (*localSubjectAccessReviews) NamespaceScoped() bool { return true }

// Create implements rest.Creater: the review of one namespace, the one of
// its URL, which its resource attributes must name.
func (r *localSubjectAccessReviews) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.LocalSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a LocaLocalSubjectAccessReview: %#v", obj))
	}
	if err := generic.EnsureNamespace(ctx, sar, true); err != nil {
		return nil, err
	}
	errs := validateSubjectAccessReviewSpec(&sar.Spec)
	errs = append(errs, validateEmptyMeta(sar.ObjectMeta, true)...)
	if ra := sar.Spec.ResourceAttributes; ra != nil && ra.Namespace != sar.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), ra.Namespace, `must match metadata.namespace`))
	}
	if sar.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), sar.Spec.NonResourceAttributes, `disallowed on this kind of request`))
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	ns := request.NamespaceValue(ctx)
	if ns == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", ns))
	}
	if ns != sar.Namespace {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", ns))
	}
	if err := admit(ctx, createValidation, obj); err != nil {
		return nil, err
	}
	sar.Status = decide(ctx, r.authorizer, attributesOf(&sar.Spec))
	return sar, nil
}

type selfSubjectAccessReviews struct {
	review[authorizationv1.SelfSubjectAccessReview, *authorizationv1.SelfSubjectAccessReview]
	authorizer authorizer.Authorizer
}

var _ rest.Creater = (*selfSubjectAccessReviews)(nil)

func (*selfSubjectAccessReviews) NamespaceScoped() bool { return false }

// Create implements rest.Creater: the question is asked about the user
// making the request.
func (r *selfSubjectAccessReviews) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectAccessReview: %#v", obj))
	}
	errs := validateAttributes(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	errs = append(errs, validateEmptyMeta(sar.ObjectMeta, false)...)
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if err := admit(ctx, createValidation, obj); err != nil {
		return nil, err
	}
	var attrs authorizer.AttributesRecord
	if ra := sar.Spec.ResourceAttributes; ra != nil {
		attrs = resourceAttributes(u, ra)
	} else {
		attrs = nonResourceAttributes(u, sar.Spec.NonResourceAttributes)
	}
	sar.Status = decide(ctx, r.authorizer, attrs)
	return sar, nil
}

func admit(ctx context.Context, createValidation rest.ValidateObjectFunc, obj runtime.Object) error {
	if createValidation == nil {
		return nil
	}
	return createValidation(ctx, obj.DeepCopyObject())
}

// attributesOf is the request a (Local)SubjectAccessReview asks about.
func attributesOf(spec *authorizationv1.SubjectAccessReviewSpec) authorizer.AttributesRecord {
	u := &user.DefaultInfo{Name: spec.User, Groups: spec.Groups, UID: spec.UID}
	if spec.Extra != nil {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	if ra := spec.ResourceAttributes; ra != nil {
		return resourceAttributes(u, ra)
	}
	return nonResourceAttributes(u, spec.NonResourceAttributes)
}
