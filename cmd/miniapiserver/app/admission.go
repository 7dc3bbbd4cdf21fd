package app

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	psapi "k8s.io/pod-security-admission/api"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/eventratelimit"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/imagepolicy"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/noderestriction"
	admissionwebhook "github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/webhook"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
)

// builtAdmission is the admission chain of the handlers, and the sources
// of admission policies and webhooks it follows (their loops run with the
// server's: startControllers).
type builtAdmission struct {
	chain    admission.Chain
	policies *admissionPolicies
	webhooks *admissionwebhook.Source
	// ownerReferences maps kinds to resources with the server's routes,
	// once built (buildHandler).
	ownerReferences *admission.OwnerReferencesPermissionEnforcement
}

// buildAdmission builds the admission chain over the groups' stores; its
// steps ask the server's authorizer.
func buildAdmission(o *Options, g *builtGroups, reg prometheus.Registerer) (*builtAdmission, error) {
	authz := g.authorization.Authorizer
	policies, err := newAdmissionPolicies(g.stores, authz)
	if err != nil {
		return nil, err
	}
	webhooks := admissionwebhook.NewSource(g.stores.serviceResolver(), admissionwebhook.NewMetrics(reg))
	ownerReferences := &admission.OwnerReferencesPermissionEnforcement{Authorizer: authz}
	provision := &admission.NamespaceAutoProvision{Namespaces: g.stores.core.Namespaces}
	chain, err := admissionChain(o, g.stores, authz, policies, webhooks, admissionSteps{ownerReferences, provision}, reg)
	if err != nil {
		return nil, err
	}
	provision.Admission = chain
	return &builtAdmission{chain: chain, policies: policies, webhooks: webhooks, ownerReferences: ownerReferences}, nil
}

// admissionSteps are the steps admissionChain is given, that are wired
// further once the chain, or the server's routes, exist.
type admissionSteps struct {
	ownerReferences *admission.OwnerReferencesPermissionEnforcement
	provision       *admission.NamespaceAutoProvision
}

// admissionChain is the admission chain of the handlers: kube's plugins
// this server runs as steps of their own, in kube's order, less those
// the flags turn off.
func admissionChain(o *Options, st *stores, authz authorizer.Authorizer,
	policies *admissionPolicies, webhooks *admissionwebhook.Source, steps admissionSteps, reg prometheus.Registerer) (admission.Chain, error) {
	podSecurity, err := admission.NewPodSecurity(admission.PodSecurityConfig{
		Configuration: o.Admission.podSecurity,
		Namespaces:    st.core.Namespaces,
		Pods:          st.core.Pods,
		Version:       kubeVersion(),
		Metrics:       reg,
	})
	if err != nil {
		return admission.Chain{}, err
	}
	quota, err := resourceQuotaAdmission(o, st)
	if err != nil {
		return admission.Chain{}, err
	}
	imagePolicy, err := imagePolicyAdmission(o)
	if err != nil {
		return admission.Chain{}, err
	}
	eventRateLimit, err := eventRateLimitAdmission(o)
	if err != nil {
		return admission.Chain{}, err
	}
	scheduling, err := schedulingAdmission(o, st)
	if err != nil {
		return admission.Chain{}, err
	}
	return admission.Chain{Metrics: admission.NewMetrics(reg), Steps: o.Admission.chain([]namedAdmission{
		{"AlwaysAdmit", alwaysAdmit(o)},
		{"NamespaceAutoProvision", steps.provision},
		{"NamespaceLifecycle", &admission.NamespaceLifecycle{Namespaces: st.core.Namespaces}},
		{"NamespaceExists", admission.NamespaceExists{Namespaces: st.core.Namespaces}},
		{"LimitPodHardAntiAffinityTopology", admission.LimitPodHardAntiAffinityTopology{}},
		{"LimitRanger", &admission.LimitRanger{LimitRanges: st.core.LimitRanges}},
		{"ServiceAccount", &admission.ServiceAccount{Pods: core.PodServiceAccount{
			ServiceAccounts: st.core.ServiceAccounts, Namespaces: st.core.Namespaces}}},
		{noderestriction.PluginName, nodeRestriction(st, authz)},
		{"TaintNodesByCondition", admission.TaintNodesByCondition{}},
		{"AlwaysPullImages", admission.AlwaysPullImages{}},
		{imagepolicy.PluginName, imagePolicy},
		{"PodSecurity", podSecurity},
		{"PodNodeSelector", scheduling.nodeSelector},
		{"Priority", &admission.Priority{PriorityClasses: st.scheduling.PriorityClasses}},
		// After DefaultTolerationSeconds, whose tolerations the pods'
		// storage adds to new pods before this chain.
		{"PodTolerationRestriction", scheduling.tolerations},
		{eventratelimit.PluginName, eventRateLimit},
		{"ExtendedResourceToleration", scheduling.extended},
		{"StorageObjectInUseProtection", admission.StorageObjectInUseProtection{}},
		{"OwnerReferencesPermissionEnforcement", steps.ownerReferences},
		{"PersistentVolumeClaimResize", &admission.PersistentVolumeClaimResize{StorageClasses: st.storage.StorageClasses}},
		{"RuntimeClass", &admission.RuntimeClass{Pods: node.PodRuntimeClass{Classes: st.node.RuntimeClasses}}},
		{"CertificateApproval", &admission.CertificateApproval{Authorizer: authz}},
		{"CertificateSigning", &admission.CertificateSigning{Authorizer: authz}},
		{"ClusterTrustBundleAttest", &admission.ClusterTrustBundleAttest{Authorizer: authz}},
		{"CertificateSubjectRestriction", admission.CertificateSubjectRestriction{}},
		{"DenyServiceExternalIPs", admission.DenyServiceExternalIPs{}},
		{"NodeDeclaredFeatureValidator", &admission.NodeDeclaredFeatureValidator{Nodes: st.core.Nodes,
			Version: version.MustParseGeneric(Version().GitVersion)}},
		{"PodResizeValidator", &admission.PodResizeValidator{Nodes: st.core.Nodes}},
		// kube's order: admission policies then webhooks, the mutating
		// ones at the mutating step (the registry runs them after the
		// built-in mutation of its hooks), the validating ones at the
		// validating step.
		{"MutatingAdmissionPolicy", policies.mutating},
		{"MutatingAdmissionWebhook", admissionwebhook.NewMutating(webhooks, st.core.Namespaces)},
		{"ValidatingAdmissionPolicy", policies.validating},
		{"ValidatingAdmissionWebhook", admissionwebhook.NewValidating(webhooks, st.core.Namespaces)},
		// Last, as in kube: what it charges stays charged.
		{"ResourceQuota", quota},
		{"AlwaysDeny", alwaysDeny(o)},
	})}, nil
}

// alwaysAdmit and alwaysDeny are the deprecated plugins, built (and
// their deprecation logged, as kube logs it) only when enabled.
func alwaysAdmit(o *Options) handlers.Admission {
	if !o.Admission.enabled("AlwaysAdmit") {
		return nil
	}
	return admission.NewAlwaysAdmit()
}

func alwaysDeny(o *Options) handlers.Admission {
	if !o.Admission.enabled("AlwaysDeny") {
		return nil
	}
	return admission.NewAlwaysDeny()
}

// kubeVersion is the Kubernetes version this server answers as
// (/version), for PodSecurity's "latest".
func kubeVersion() psapi.Version {
	v := Version()
	major, _ := strconv.Atoi(v.Major)
	minor, _ := strconv.Atoi(v.Minor)
	return psapi.MajorMinorVersion(major, minor)
}
