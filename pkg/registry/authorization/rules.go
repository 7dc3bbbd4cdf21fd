package authorization

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

type selfSubjectRulesReviews struct {
	review[authorizationv1.SelfSubjectRulesReview, *authorizationv1.SelfSubjectRulesReview]
	resolver authorizer.RuleResolver
}

var _ rest.Creater = (*selfSubjectRulesReviews)(nil)

func (*selfSubjectRulesReviews) NamespaceScoped() bool { return false }

// Create implements rest.Creater: the rules of the requesting user in the
// namespace of the spec. As kube's, the answer is a new object with only
// a status.
func (r *selfSubjectRulesReviews) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	review, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectRulesReview: %#v", obj))
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if review.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	if err := admit(ctx, createValidation, obj); err != nil {
		return nil, err
	}
	resources, nonResources, incomplete, err := r.resolver.RulesFor(ctx, u, review.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{TypeMeta: review.TypeMeta, Status: authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    make([]authorizationv1.ResourceRule, len(resources)),
		NonResourceRules: make([]authorizationv1.NonResourceRule, len(nonResources)),
		Incomplete:       incomplete,
	}}
	for i, info := range resources {
		out.Status.ResourceRules[i] = authorizationv1.ResourceRule{
			Verbs: info.GetVerbs(), APIGroups: info.GetAPIGroups(), Resources: info.GetResources(), ResourceNames: info.GetResourceNames(),
		}
	}
	for i, info := range nonResources {
		out.Status.NonResourceRules[i] = authorizationv1.NonResourceRule{Verbs: info.GetVerbs(), NonResourceURLs: info.GetNonResourceURLs()}
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}
