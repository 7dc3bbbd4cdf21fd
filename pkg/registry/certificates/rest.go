// Package certificates serves the certificates.k8s.io group (v1):
// certificatesigningrequests (with their status and approval
// subresources), clustertrustbundles and podcertificaterequests.
//
// Who may approve or sign is admission's and authorization's business
// (kube's CertificateApproval, CertificateSigning and
// CertificateSubjectRestriction plugins, and the "sign" check of
// podcertificaterequests/status); this package stores the objects with
// kube's strategies and validation.
package certificates

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of certificates.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return certificatesv1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// PodCertificateRequests are read by the Node authorizer.
	PodCertificateRequests *generic.Store
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	info, stores, err := generic.BuildGroupStores(certificatesv1.SchemeGroupVersion, getter,
		certificateSigningRequests, clusterTrustBundles, podCertificateRequests)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{PodCertificateRequests: stores[2]}, info, nil
}
