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
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// PodCertificateRequests are read by the Node authorizer.
	PodCertificateRequests *generic.Store
}

// NewRESTStorageProvider returns the provider of certificates.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(certificatesv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{PodCertificateRequests: s[2]} },
		certificateSigningRequests, clusterTrustBundles, podCertificateRequests)
}
