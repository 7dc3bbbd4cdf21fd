// Package authentication serves the authentication.k8s.io group (v1):
// TokenReview (is this token valid, and whose is it?) and
// SelfSubjectReview (who am I?). Neither is stored: each create answers
// at once.
package authentication

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of authentication.k8s.io.
type RESTStorageProvider struct {
	// Authenticator reviews the tokens of TokenReviews: the server's own
	// chain (nil: every token is reported not authenticated).
	Authenticator authenticator.Request
	// APIAudiences are the audiences of a review that names none.
	APIAudiences []string
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return authenticationv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	v := authenticationv1.SchemeGroupVersion.Version
	return rest.APIGroupInfo{
		GroupName:           authenticationv1.GroupName,
		PrioritizedVersions: []string{v},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{v: {
			"tokenreviews":       &TokenReviewREST{authenticator: p.Authenticator, apiAudiences: p.APIAudiences},
			"selfsubjectreviews": &SelfSubjectReviewREST{},
		}},
	}, nil
}
