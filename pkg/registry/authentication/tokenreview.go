package authentication

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// TokenReviewREST serves tokenreviews: it authenticates the token of the
// review as a bearer token of a request would be (for the review's
// audiences, else the API's), and reports the user, as kube does for
// webhook token authenticators (kubelets, aggregated servers).
type TokenReviewREST struct {
	authenticator authenticator.Request
	apiAudiences  []string
}

var (
	_ rest.Creater              = (*TokenReviewREST)(nil)
	_ rest.Scoper               = (*TokenReviewREST)(nil)
	_ rest.SingularNameProvider = (*TokenReviewREST)(nil)
)

// New implements rest.Storage.
func (r *TokenReviewREST) New() runtime.Object { return &authenticationv1.TokenReview{} }

// Destroy implements rest.Storage.
func (r *TokenReviewREST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *TokenReviewREST) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (r *TokenReviewREST) GetSingularName() string { return "tokenreview" }

var errBadAudiences = apierrors.NewInternalError(errors.New("error validating audiences"))

// Create implements rest.Creater.
func (r *TokenReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	review, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenReview: %T", obj))
	}
	if ns := request.NamespaceValue(ctx); ns != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", ns))
	}
	if review.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	review.TypeMeta = metav1.TypeMeta{Kind: "TokenReview", APIVersion: authenticationv1.SchemeGroupVersion.String()}
	if r.authenticator == nil {
		return review, nil
	}
	fake := (&http.Request{Header: http.Header{}}).WithContext(ctx)
	fake.Header.Set("Authorization", "Bearer "+review.Spec.Token)
	auds := review.Spec.Audiences
	if len(auds) == 0 {
		auds = r.apiAudiences
	}
	if len(auds) > 0 {
		fake = fake.WithContext(authenticator.WithAudiences(fake.Context(), auds))
	}
	resp, ok, err := r.authenticator.AuthenticateRequest(fake)
	review.Status.Authenticated = ok
	if err != nil {
		review.Status.Error = err.Error()
	}
	if len(auds) > 0 && resp != nil && len(authenticator.Audiences(auds).Intersect(resp.Audiences)) == 0 {
		return nil, errBadAudiences
	}
	if resp != nil && resp.User != nil {
		review.Status.User = userInfo(resp.User.GetName(), resp.User.GetUID(), resp.User.GetGroups(), resp.User.GetExtra())
		review.Status.Audiences = resp.Audiences
	}
	return review, nil
}

func userInfo(name, uid string, groups []string, extra map[string][]string) authenticationv1.UserInfo {
	u := authenticationv1.UserInfo{Username: name, UID: uid, Groups: groups, Extra: map[string]authenticationv1.ExtraValue{}}
	for k, v := range extra {
		u.Extra[k] = v
	}
	return u
}
