package admission

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/noderestriction"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// kube's certificate plugins decide who may act for a signer by asking
// the authorizer for a verb on the synthetic resource
// certificates.k8s.io/signers, named by the signer (or by its domain and
// "/*"): approve, sign and attest.

// CertificateApproval is kube's plugin of that name: approving or denying
// a CertificateSigningRequest (its approval subresource) needs the verb
// approve on its signer.
type CertificateApproval struct {
	Authorizer authorizer.Authorizer
}

// Validate implements handlers.Admission.
func (c *CertificateApproval) Validate(ctx context.Context, a handlers.Attributes, _ runtime.Object) error {
	// The old object's signer: a request that also changes the signer is
	// judged by the one it has (and then refused by validation).
	old, err := oldCSR(a, "approval")
	if old == nil {
		return err
	}
	if !authorizedForSigner(ctx, c.Authorizer, "approve", old.Spec.SignerName) {
		return forbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// CertificateSigning is kube's plugin of that name: changing a
// CertificateSigningRequest's certificate or conditions through its
// status subresource needs the verb sign on its signer.
type CertificateSigning struct {
	Authorizer authorizer.Authorizer
}

// Validate implements handlers.Admission.
func (c *CertificateSigning) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	old, err := oldCSR(a, "status")
	if old == nil {
		return err
	}
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return forbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", obj))
	}
	if reflect.DeepEqual(old.Status.Certificate, csr.Status.Certificate) && equality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
		return nil
	}
	if !authorizedForSigner(ctx, c.Authorizer, "sign", old.Spec.SignerName) {
		return forbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// oldCSR returns the stored CertificateSigningRequest that a, a write to
// its subresource sub, changes; nil, with no error, when a is another
// request (the plugins that judge such writes ignore it).
func oldCSR(a handlers.Attributes, sub string) (*certificatesv1.CertificateSigningRequest, error) {
	if a.Resource.GroupResource() != certificatesv1.Resource("certificatesigningrequests") || a.Subresource != sub {
		return nil, nil
	}
	old, ok := a.Old.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil, forbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Old))
	}
	return old, nil
}

// CertificateSubjectRestriction is kube's plugin of that name: a new
// request to the kube-apiserver-client signer may not ask for the group
// system:masters.
type CertificateSubjectRestriction struct{}

// Validate implements handlers.Admission.
func (CertificateSubjectRestriction) Validate(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Create || a.Resource.GroupResource() != certificatesv1.Resource("certificatesigningrequests") || a.Subresource != "" {
		return nil
	}
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return forbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", obj))
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	parsed, err := noderestriction.ParseCSR(csr.Spec.Request)
	if err != nil {
		return forbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	for _, group := range parsed.Subject.Organization {
		if group == "system:masters" {
			return forbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName))
		}
	}
	return nil
}

// ClusterTrustBundleAttest is kube's plugin of that name: creating or
// updating a ClusterTrustBundle that names a signer needs the verb attest
// on it, unless the update changes only what the garbage collector and
// storage migration change.
type ClusterTrustBundleAttest struct {
	Authorizer authorizer.Authorizer
}

// Validate implements handlers.Admission.
func (c *ClusterTrustBundleAttest) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Resource.GroupResource() != certificatesv1.Resource("clustertrustbundles") ||
		(a.Operation != handlers.Create && a.Operation != handlers.Update) {
		return nil
	}
	signer, ok := bundleSigner(obj)
	if !ok {
		return forbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.Old))
	}
	if signer == "" {
		return nil
	}
	if a.Operation == handlers.Update && onlyGCFieldsChanged(obj, a.Old) {
		return nil
	}
	if !authorizedForSigner(ctx, c.Authorizer, "attest", signer) {
		return forbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", signer))
	}
	return nil
}

// bundleSigner is the signer of a ClusterTrustBundle at any version it
// is served at.
func bundleSigner(obj runtime.Object) (string, bool) {
	switch b := obj.(type) {
	case *certificatesv1.ClusterTrustBundle:
		return b.Spec.SignerName, true
	case *certificatesv1beta1.ClusterTrustBundle:
		return b.Spec.SignerName, true
	case *certificatesv1alpha1.ClusterTrustBundle:
		return b.Spec.SignerName, true
	}
	return "", false
}

// onlyGCFieldsChanged reports whether obj differs from old in owner
// references, finalizers and managed fields alone, as kube's
// rbac.IsOnlyMutatingGCFields.
func onlyGCFieldsChanged(obj, old runtime.Object) bool {
	if old == nil {
		return false
	}
	copied := obj.DeepCopyObject()
	m, err := meta.Accessor(copied)
	if err != nil {
		return false
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	m.SetOwnerReferences(oldMeta.GetOwnerReferences())
	m.SetFinalizers(oldMeta.GetFinalizers())
	m.SetSelfLink(oldMeta.GetSelfLink())
	m.SetManagedFields(oldMeta.GetManagedFields())
	return equality.Semantic.DeepEqual(copied, old)
}

// authorizedForSigner reports whether the request's user may do verb on
// the signer, or on every signer of its domain ("example.com/*"), as
// kube's certauthorization.IsAuthorizedForSignerName; an authorizer's
// error is a refusal.
func authorizedForSigner(ctx context.Context, authz authorizer.Authorizer, verb, signer string) bool {
	u, _ := request.UserFrom(ctx)
	domain, _, _ := strings.Cut(signer, "/")
	for _, name := range []string{signer, domain + "/*"} {
		decision, _, err := authz.Authorize(ctx, authorizer.AttributesRecord{
			User: u, Verb: verb, Name: name, APIGroup: certificatesv1.GroupName, APIVersion: "*",
			Resource: "signers", ResourceRequest: true,
		})
		if err == nil && decision == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}

// forbidden is kube's admission.NewForbidden: the resource (without its
// subresource) and name the request names.
func forbidden(a handlers.Attributes, err error) error {
	return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
}
