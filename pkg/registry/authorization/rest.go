// Package authorization serves the authorization.k8s.io group (v1): the
// review APIs, which ask the server's authorizer a question and answer it
// in the object's status. Nothing is stored; create is the only verb.
//
//   - SubjectAccessReview: may this user (and groups) do this?
//   - LocalSubjectAccessReview: the same, in the namespace of its URL.
//   - SelfSubjectAccessReview: may I do this? (kubectl auth can-i)
//   - SelfSubjectRulesReview: what may I do in this namespace?
//     (kubectl auth can-i --list)
package authorization

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of authorization.k8s.io.
type RESTStorageProvider struct {
	// Authorizer answers the access reviews; RuleResolver the rules
	// reviews. nil: a provider only inspected (never served).
	Authorizer   authorizer.Authorizer
	RuleResolver authorizer.RuleResolver
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return authorizationv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	v := authorizationv1.SchemeGroupVersion.Version
	return rest.APIGroupInfo{
		GroupName:           authorizationv1.GroupName,
		PrioritizedVersions: []string{v},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{v: {
			"subjectaccessreviews":      &subjectAccessReviews{authorizer: p.Authorizer},
			"localsubjectaccessreviews": &localSubjectAccessReviews{authorizer: p.Authorizer},
			"selfsubjectaccessreviews":  &selfSubjectAccessReviews{authorizer: p.Authorizer},
			"selfsubjectrulesreviews":   &selfSubjectRulesReviews{resolver: p.RuleResolver},
		}},
	}, nil
}
