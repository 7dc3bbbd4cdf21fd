package app

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// KubeOptions are kube-apiserver flags that each need little of this
// server: they are here, rather than beside the parts they configure, so
// that kube's command lines (kubeadm's, kind's, kwok's) find them.
type KubeOptions struct {
	// FeatureGates is --feature-gates (see honouredFeatureGates).
	FeatureGates featureGates
	// RuntimeConfig is --runtime-config: the API versions and resources
	// served.
	RuntimeConfig runtimeConfig
	// ServiceNodePortRange is --service-node-port-range.
	ServiceNodePortRange utilnet.PortRange
	// GoawayChance is --goaway-chance: the probability that an HTTP/2
	// request's response closes its connection (GOAWAY), so that clients
	// behind a load balancer spread over the replicas again.
	GoawayChance float64
	// APIServerCount is --apiserver-count: the number of replicas of the
	// master-count endpoint reconciler (the lease one, as kube's, has no
	// use for it).
	APIServerCount int
	// Version is --version.
	Version versionFlag
	// Serving are kube's TLS and listener flags of the secure port.
	Serving ServingOptions
	// Misc are kube's flags of smaller parts.
	Misc MiscOptions

	refused refusedFlags
}

func defaultKubeOptions() KubeOptions {
	return KubeOptions{ServiceNodePortRange: core.DefaultServiceNodePortRange, APIServerCount: 1,
		Misc: defaultMiscOptions(), refused: refusedFlags{}}
}

func (o *KubeOptions) addFlags(fs *pflag.FlagSet) {
	fs.Var(&o.FeatureGates, "feature-gates",
		"A set of key=value pairs that describe feature gates, kube-apiserver 1.37's (unknown gates are refused, as kube). A gate set away from its default is refused: miniapiserver serves the API as kube with every gate at its default.")
	fs.Var(&o.RuntimeConfig, "runtime-config",
		"A set of key=value pairs that enable or disable API versions and resources, as kube's: api/all=false, api/ga=false, <group>/<version>=false (v1 for the core group), <group>/<version>/<resource>=false. Only the versions and resources miniapiserver serves can be turned on.")
	fs.Var(&o.ServiceNodePortRange, "service-node-port-range",
		"A port range to reserve for services with NodePort visibility.  This must not overlap with the ephemeral port range on nodes.  Example: '30000-32767'. Inclusive at both ends of the range.")
	fs.Float64Var(&o.GoawayChance, "goaway-chance", o.GoawayChance,
		"To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY). The client's other in-flight requests won't be affected, and the client will reconnect, likely landing on a different apiserver after going through the load balancer again. This argument sets the fraction of requests that will be sent a GOAWAY. Min is 0 (off), Max is .02 (1/50 requests); .001 (1/1000) is a recommended starting point.")
	fs.IntVar(&o.APIServerCount, "apiserver-count", o.APIServerCount,
		"The number of apiservers running in the cluster, must be a positive number. (In use when --endpoint-reconciler-type=master-count is enabled.)")
	_ = fs.MarkDeprecated("apiserver-count", "apiserver-count is deprecated and will be removed in a future version.")
	fs.Var(&o.Version, "version", "--version, --version=raw prints version information and quits; --version=vX.Y.Z... sets the reported version (refused by miniapiserver)")
	fs.Lookup("version").NoOptDefVal = "true"
	o.Serving.addFlags(fs)
	o.Misc.addFlags(fs)
}

// validate checks the flags as kube does (its messages where it has
// them), then refuses what this server does not do. apf is
// --enable-priority-and-fairness.
func (o *KubeOptions) validate(apf bool) error {
	if err := o.FeatureGates.validate(); err != nil {
		return err
	}
	if err := o.RuntimeConfig.validate(nil, apf); err != nil {
		return err
	}
	if o.ServiceNodePortRange.Size == 0 {
		return fmt.Errorf("--service-node-port-range: must not be empty")
	}
	if o.GoawayChance < 0 || o.GoawayChance > 0.02 {
		return fmt.Errorf("--goaway-chance can not be less than 0 or greater than 0.02")
	}
	if o.APIServerCount <= 0 {
		return fmt.Errorf("--apiserver-count should be a positive number, but value '%d' provided", o.APIServerCount)
	}
	if err := o.Version.validate(); err != nil {
		return err
	}
	if err := o.Serving.validate(); err != nil {
		return err
	}
	if err := o.Misc.validate(); err != nil {
		return err
	}
	return o.refused.validate()
}

// servedGroups is the part of groups (every group built) that
// --runtime-config serves; a version or resource it turns on that groups
// do not have is refused. apf is --enable-priority-and-fairness.
func (o *KubeOptions) servedGroups(groups []rest.APIGroupInfo, apf bool) ([]rest.APIGroupInfo, error) {
	if err := o.RuntimeConfig.validate(servedResources(groups), apf); err != nil {
		return nil, err
	}
	return o.RuntimeConfig.filter(groups), nil
}

// secondsValue is a duration flag that kube declares as an int of
// seconds (--min-request-timeout), so that kube's command lines parse; a
// Go duration ("30m") is read too, as this server's earlier releases
// took one.
type secondsValue struct{ d *time.Duration }

func (v secondsValue) String() string { return strconv.FormatInt(int64(*v.d/time.Second), 10) }
func (v secondsValue) Type() string   { return "int" }

func (v secondsValue) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		*v.d = time.Duration(n) * time.Second
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want whole seconds (as kube's) or a Go duration: %q", s)
	}
	*v.d = d
	return nil
}
