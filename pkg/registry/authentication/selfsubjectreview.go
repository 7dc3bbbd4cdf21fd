package authentication

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// SelfSubjectReviewREST serves selfsubjectreviews: the user the server
// sees making the request (kubectl auth whoami).
type SelfSubjectReviewREST struct{}

var (
	_ rest.Creater              = (*SelfSubjectReviewREST)(nil)
	_ rest.Scoper               = (*SelfSubjectReviewREST)(nil)
	_ rest.SingularNameProvider = (*SelfSubjectReviewREST)(nil)
)

// New implements rest.Storage.
func (r *SelfSubjectReviewREST) New() runtime.Object { return &authenticationv1.SelfSubjectReview{} }

// Destroy implements rest.Storage.
func (r *SelfSubjectReviewREST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *SelfSubjectReviewREST) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (r *SelfSubjectReviewREST) GetSingularName() string { return "selfsubjectreview" }

// Create implements rest.Creater.
func (r *SelfSubjectReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if _, ok := obj.(*authenticationv1.SelfSubjectReview); !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectReview: %T", obj))
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	return &authenticationv1.SelfSubjectReview{
		TypeMeta:   metav1.TypeMeta{Kind: "SelfSubjectReview", APIVersion: authenticationv1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(u.GetName(), u.GetUID(), u.GetGroups(), u.GetExtra())},
	}, nil
}
