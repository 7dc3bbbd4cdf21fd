package app

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"
	psconfig "k8s.io/pod-security-admission/admission/api"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
)

// AdmissionOptions are kube-apiserver's flags that choose the admission
// plugins, with kube's plugin names.
type AdmissionOptions struct {
	EnablePlugins  []string
	DisablePlugins []string
	// Control is kube's deprecated --admission-control: when given (even
	// empty), exactly the plugins it lists run, every other is off.
	Control []string
	// ConfigFile is --admission-control-config-file (options_admission_config.go).
	ConfigFile string
	// NotReadyTolerationSeconds and UnreachableTolerationSeconds are
	// what DefaultTolerationSeconds gives pods.
	NotReadyTolerationSeconds, UnreachableTolerationSeconds int64

	// podSecurity is the PodSecurity plugin's configuration, read by
	// validate.
	podSecurity *psconfig.PodSecurityConfiguration
}

type kubePlugin struct {
	name      string
	defaultOn bool
}

// kubeAdmissionPlugins are kube-apiserver 1.37's admission plugins, in
// kube's order, and whether kube runs each by default.
var kubeAdmissionPlugins = []kubePlugin{
	{"AlwaysAdmit", false}, {"NamespaceAutoProvision", false}, {"NamespaceLifecycle", true}, {"NamespaceExists", false},
	{"LimitPodHardAntiAffinityTopology", false}, {"LimitRanger", true}, {"ServiceAccount", true}, {"NodeRestriction", false},
	{"TaintNodesByCondition", true}, {"AlwaysPullImages", false}, {"ImagePolicyWebhook", false}, {"PodSecurity", true},
	{"PodNodeSelector", false}, {"Priority", true}, {"DefaultTolerationSeconds", true}, {"PodTolerationRestriction", false},
	{"EventRateLimit", false}, {"ExtendedResourceToleration", false}, {"DefaultStorageClass", true},
	{"StorageObjectInUseProtection", true}, {"PodGroupProtection", true}, {"OwnerReferencesPermissionEnforcement", false},
	{"PersistentVolumeClaimResize", true}, {"RuntimeClass", true}, {"CertificateApproval", true}, {"CertificateSigning", true},
	{"ClusterTrustBundleAttest", true}, {"CertificateSubjectRestriction", true}, {"DefaultIngressClass", true},
	{"DenyServiceExternalIPs", false}, {"PodTopologyLabels", true}, {"NodeDeclaredFeatureValidator", true},
	{"PodResizeValidator", true}, {"MutatingAdmissionPolicy", true}, {"MutatingAdmissionWebhook", true},
	{"ValidatingAdmissionPolicy", true}, {"ValidatingAdmissionWebhook", true}, {"ResourceQuota", true}, {"AlwaysDeny", false},
}

// Every plugin of kubeAdmissionPlugins is a step of admissionChain, or,
// for those that change new pods, claims and ingresses, of their storage
// (buildStores); the flags turn each off or on. PodGroupProtection does
// nothing in kube's default configuration (behind an alpha feature gate)
// and is not built: disabling it changes nothing.

func defaultAdmissionOptions() AdmissionOptions {
	return AdmissionOptions{
		NotReadyTolerationSeconds:    core.KubeDefaultTolerationSeconds.NotReady,
		UnreachableTolerationSeconds: core.KubeDefaultTolerationSeconds.Unreachable,
	}
}

func (o *AdmissionOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.EnablePlugins, "enable-admission-plugins", o.EnablePlugins,
		"Admission plugins to enable beside the default ones, by kube's names (comma separated): any of kube's, those kube runs only when asked included.")
	fs.StringSliceVar(&o.DisablePlugins, "disable-admission-plugins", o.DisablePlugins,
		"Admission plugins to disable, by kube's names (comma separated): any of kube's, those it runs by default included. PodGroupProtection is accepted and changes nothing, as it does nothing in kube's default configuration.")
	fs.StringSliceVar(&o.Control, "admission-control", o.Control,
		"Admission plugins to run, by kube's names (comma separated): when given, even empty, exactly these run and every other is off. Deprecated in kube: use --enable-admission-plugins and --disable-admission-plugins, which it excludes.")
	_ = fs.MarkDeprecated("admission-control", "Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.")
	o.addConfigFileFlag(fs)
	fs.Int64Var(&o.NotReadyTolerationSeconds, "default-not-ready-toleration-seconds", o.NotReadyTolerationSeconds,
		"Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.")
	fs.Int64Var(&o.UnreachableTolerationSeconds, "default-unreachable-toleration-seconds", o.UnreachableTolerationSeconds,
		"Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.")
}

func (o *AdmissionOptions) validate() error {
	if o.Control != nil && (o.EnablePlugins != nil || o.DisablePlugins != nil) {
		return fmt.Errorf("admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive")
	}
	for _, flag := range []struct {
		name    string
		plugins []string
	}{{"--enable-admission-plugins", o.EnablePlugins}, {"--disable-admission-plugins", o.DisablePlugins}, {"--admission-control", o.Control}} {
		for _, p := range flag.plugins {
			if !slices.ContainsFunc(kubeAdmissionPlugins, func(k kubePlugin) bool { return k.name == p }) {
				return fmt.Errorf("%s: plugin %q is unknown", flag.name, p)
			}
		}
	}
	for _, p := range o.EnablePlugins {
		if slices.Contains(o.DisablePlugins, p) {
			return fmt.Errorf("--enable-admission-plugins and --disable-admission-plugins: %s in both", p)
		}
	}
	var err error
	o.podSecurity, err = o.podSecurityConfig()
	return err
}

// disabled reports whether the flags turn off plugin name.
func (o *AdmissionOptions) disabled(name string) bool {
	if o.Control != nil {
		return !slices.Contains(o.Control, name)
	}
	return slices.Contains(o.DisablePlugins, name)
}

// enabled reports whether the flags name plugin name to run (for the
// plugins kube runs only when asked).
func (o *AdmissionOptions) enabled(name string) bool {
	if o.Control != nil {
		return slices.Contains(o.Control, name)
	}
	return slices.Contains(o.EnablePlugins, name)
}

func defaultOnPlugin(name string) bool {
	for _, k := range kubeAdmissionPlugins {
		if k.name == name {
			return k.defaultOn
		}
	}
	return false
}

// namedAdmission is a step of the admission chain under its kube
// plugin's name.
type namedAdmission struct {
	name string
	step handlers.Admission
}

// chain is the admission chain of steps, less the disabled plugins and
// the opt-in plugins not enabled.
func (o *AdmissionOptions) chain(steps []namedAdmission) []admission.Step {
	var out []admission.Step
	for _, s := range steps {
		if !o.disabled(s.name) && (defaultOnPlugin(s.name) || o.enabled(s.name)) {
			out = append(out, admission.Step{Name: s.name, Admission: s.step})
		}
	}
	return out
}
