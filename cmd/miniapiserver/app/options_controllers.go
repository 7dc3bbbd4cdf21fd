package app

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// The kube-controller-manager controllers this server can run in process,
// by kube-controller-manager 1.37's canonical names.
const (
	namespaceControllerName      = "namespace-controller"
	serviceAccountControllerName = "serviceaccount-controller"
	rootCAPublisherName          = "root-ca-certificate-publisher-controller"
	garbageCollectorName         = "garbage-collector-controller"
	clusterRoleAggregationName   = "clusterrole-aggregation-controller"
)

// inProcessController is one of those controllers: its canonical name,
// the aliases --controllers also accepts, and whether "*" runs it.
type inProcessController struct {
	name    string
	aliases []string
	// standalone: on by default when the binary runs as miniapiserver.
	// Run as kube-apiserver, only kubeAPIServerDefault ones are.
	standalone           bool
	kubeAPIServerDefault bool
}

// inProcessControllers are listed in kube-controller-manager's order of
// names (sorted). Aliases are kube-controller-manager's, plus
// "garbage-collector", the name of the older --garbage-collector flag.
var inProcessControllers = []inProcessController{
	{name: clusterRoleAggregationName, aliases: []string{"clusterrole-aggregation"}, standalone: true},
	{name: garbageCollectorName, aliases: []string{"garbagecollector", "garbage-collector"}},
	// Run as kube-apiserver too: users of envtest expect a deleted
	// namespace to go away, and finalizing it creates nothing.
	{name: namespaceControllerName, aliases: []string{"namespace"}, standalone: true, kubeAPIServerDefault: true},
	{name: rootCAPublisherName, aliases: []string{"root-ca-cert-publisher"}, standalone: true},
	{name: serviceAccountControllerName, aliases: []string{"serviceaccount"}, standalone: true},
}

// IsKubeAPIServer reports whether the process was started as
// kube-apiserver (the base name of argv0), as envtest starts the binary
// of its asset directory: it then creates nothing kube-apiserver would not
// (see Options.KubeAPIServer).
func IsKubeAPIServer(argv0 string) bool {
	return filepath.Base(argv0) == kubeAPIServerName
}

// canonicalController is the canonical name of name or alias (false: no
// such controller).
func canonicalController(name string) (string, bool) {
	for _, c := range inProcessControllers {
		if c.name == name || slices.Contains(c.aliases, name) {
			return c.name, true
		}
	}
	return "", false
}

// onByDefault is whether "*" runs c.
func (o *Options) onByDefault(c inProcessController) bool {
	if o.KubeAPIServer {
		return c.kubeAPIServerDefault
	}
	return c.standalone
}

// addControllerFlags registers --controllers and the older flags that
// each choose one controller.
func (o *Options) addControllerFlags(fs *pflag.FlagSet) {
	var all, off []string
	for _, c := range inProcessControllers {
		all = append(all, c.name)
		if !o.onByDefault(c) {
			off = append(off, c.name)
		}
	}
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"The kube-controller-manager controllers to run in this process, with kube-controller-manager's names, aliases and syntax: "+
			"'*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables it. "+
			"Run as kube-apiserver (envtest's asset), only namespace-controller is on by default: the server then creates nothing kube-apiserver would not "+
			"(no ServiceAccount default nor ConfigMap kube-root-ca.crt in new namespaces, no rules in aggregated ClusterRoles). "+
			"Turn them off when a kube-controller-manager runs against this server.\nAll controllers: %s\nDisabled-by-default controllers: %s",
		strings.Join(all, ", "), strings.Join(off, ", ")))
	fs.BoolVar(&o.NamespaceController, "namespace-controller", o.NamespaceController,
		"Deprecated: use --controllers (=*,-namespace to turn it off). Finish namespace deletions (delete their contents, then the namespace), as kube-controller-manager's namespace controller does.")
	fs.BoolVar(&o.GarbageCollector, "garbage-collector", o.GarbageCollector,
		"Deprecated: use --controllers (=*,garbagecollector to turn it on). Delete the dependents of deleted owners (metadata.ownerReferences; background, foreground and orphan propagation), as kube-controller-manager's garbage collector does.")
	for name, instead := range map[string]string{"namespace-controller": "namespace", "garbage-collector": "garbagecollector"} {
		_ = fs.MarkDeprecated(name, fmt.Sprintf("use --controllers (%s or -%s)", instead, instead))
		// Still listed in the help, where their users look.
		fs.Lookup(name).Hidden = false
	}
}

// ApplyDeprecatedControllerFlags turns the older flags, when given, into
// names in front of --controllers: the first name that decides a
// controller wins, so they decide theirs as they always did.
func (o *Options) ApplyDeprecatedControllerFlags(fs *pflag.FlagSet) {
	for _, f := range []struct {
		flag, name string
		on         bool
	}{{"garbage-collector", "garbagecollector", o.GarbageCollector}, {"namespace-controller", "namespace", o.NamespaceController}} {
		if !fs.Changed(f.flag) {
			continue
		}
		name := f.name
		if !f.on {
			name = "-" + name
		}
		o.Controllers = append([]string{name}, o.Controllers...)
	}
}

// validateControllers refuses names no controller has, naming all of them.
func (o *Options) validateControllers() error {
	var unknown []string
	for _, name := range o.Controllers {
		if name == "*" {
			continue
		}
		if _, ok := canonicalController(strings.TrimPrefix(name, "-")); !ok {
			unknown = append(unknown, fmt.Sprintf("%q", strings.TrimPrefix(name, "-")))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	var all []string
	for _, c := range inProcessControllers {
		all = append(all, c.name)
	}
	return fmt.Errorf("--controllers: %s not in the list of known controllers (%s, or their aliases)",
		strings.Join(unknown, ", "), strings.Join(all, ", "))
}

// controllerEnabled is whether the controller of canonical name runs, as
// kube-controller-manager decides (k8s.io/controller-manager's
// IsControllerEnabled): the first of --controllers that names it, else
// whether "*" is there and it is on by default. The older flags set on
// Options directly (not through the command line) still decide when they
// differ from their defaults.
func (o *Options) controllerEnabled(name string) bool {
	switch {
	case name == namespaceControllerName && !o.NamespaceController:
		return false
	case name == garbageCollectorName && o.GarbageCollector:
		return true
	}
	star := false
	for _, entry := range o.Controllers {
		if entry == "*" {
			star = true
			continue
		}
		canonical, _ := canonicalController(strings.TrimPrefix(entry, "-"))
		if canonical == name {
			return !strings.HasPrefix(entry, "-")
		}
	}
	if !star {
		return false
	}
	for _, c := range inProcessControllers {
		if c.name == name {
			return o.onByDefault(c)
		}
	}
	return false
}
