// Package app turns miniapiserver's flags into a running server. The
// binary (cmd/miniapiserver) only parses flags and calls Run; tests start
// complete servers in process through the same Config (see testserver).
package app

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
)

// Options are the command line flags.
type Options struct {
	EtcdServers            []string
	DataDir                string
	EtcdPrefix             string
	EtcdCompactionInterval time.Duration
	EtcdDefragInterval     time.Duration
	EtcdDefragThreshold    float64

	// EtcdUnsafeNoFsync skips fsync in the embedded etcd (tests, benchmarks).
	EtcdUnsafeNoFsync bool
	// EtcdQuotaBackendBytes is the embedded etcd's space quota (0: etcd's).
	EtcdQuotaBackendBytes int64

	BindAddress string
	// AdvertiseAddress is the address other members of the cluster reach
	// this replica at: the kubernetes Service's endpoints list it.
	// Empty: the bind address, or 127.0.0.1 when that is unspecified.
	AdvertiseAddress string
	// EndpointReconcilerType is kube's: lease (the kubernetes endpoints
	// list the replicas with live leases), master-count (they list up to
	// --apiserver-count replicas, without leases) or none.
	EndpointReconcilerType string
	// EndpointReconcilerTTL and EndpointReconcilerInterval are the lease
	// duration and renewal period (kube's: 15 s and 10 s).
	EndpointReconcilerTTL, EndpointReconcilerInterval time.Duration
	SecurePort                                        int
	TLSCertFile                                       string
	TLSPrivateKeyFile                                 string
	// CertDir is kube's --cert-dir: where the serving certificate is
	// found (apiserver.crt, apiserver.key) or generated, without
	// --tls-cert-file ("": --data-dir's pki).
	CertDir string
	// AllowPrivileged is kube's --allow-privileged; only true (privileged
	// containers admitted) is implemented.
	AllowPrivileged     bool
	TokenAuthFile       string
	InsecurePort        int
	InsecureBindAddr    string
	InsecureAllowRemote bool

	WatchCache      bool
	WatchCacheSizes []string
	// WatchCacheEncodingBudget bounds the bytes of the protobuf encodings
	// the watch caches' objects remember, all caches together (0: none).
	WatchCacheEncodingBudget int64
	// WatchCacheHistoryBytes bounds the bytes of the objects each watch
	// cache's event history holds (0: its event count only, as kube's).
	WatchCacheHistoryBytes int64

	// EncryptionProviderConfig is the EncryptionConfiguration file of
	// encryption at rest ("": values stored as they are).
	EncryptionProviderConfig string
	// StorageMediaType is kube's --storage-media-type: the media type
	// built-in objects are stored in (custom resources, CRDs and
	// APIServices are JSON whatever it says, as in kube).
	StorageMediaType string

	// MinRequestTimeout is kube's --min-request-timeout, in whole seconds
	// on the command line: the base of the random timeout of watches
	// without timeoutSeconds (0: none).
	MinRequestTimeout time.Duration
	RequestTimeout    time.Duration
	ShutdownTimeout   time.Duration
	// HTTP2MaxStreamsPerConnection limits the streams of one HTTP/2
	// connection (0: kube-apiserver's default, 100).
	HTTP2MaxStreamsPerConnection int
	// ShutdownDelayDuration is how long /readyz fails before the server
	// stops serving (kube's --shutdown-delay-duration).
	ShutdownDelayDuration time.Duration
	EventTTL              time.Duration
	// ServiceClusterIPRange is the CIDR of services' cluster IPs, or two
	// of different families, comma separated (dual-stack).
	ServiceClusterIPRange string
	Profiling             bool
	// Controllers chooses the kube-controller-manager controllers that
	// run in process, with kube-controller-manager's names and syntax
	// (see controllerEnabled).
	Controllers []string
	// KubeAPIServer is set when the binary runs as kube-apiserver
	// (IsKubeAPIServer; not a flag): "*" in Controllers then means only
	// the namespace controller, so that the server creates nothing
	// kube-apiserver would not.
	KubeAPIServer bool
	// NamespaceController false turns the namespace controller off, and
	// GarbageCollector true turns the garbage collector on, whatever
	// Controllers says (the deprecated flags of the same names).
	NamespaceController bool
	GarbageCollector    bool
	LogLevel            string

	// Auth are the flags of authentication, authorization and the
	// in-flight limits; Audit those of the audit log.
	Auth  AuthOptions
	Audit AuditOptions
	// Admission are the flags that choose the admission plugins.
	Admission AdmissionOptions
	// Kubelet are the flags of how the server reaches kubelets.
	Kubelet KubeletOptions
	// EmbeddedEtcd are the flags of the embedded HA mode.
	EmbeddedEtcd EmbeddedEtcdOptions
	// Logging are kube's logging flags (--v, --vmodule, --logging-format).
	Logging LoggingOptions
	// Kube are kube-apiserver's other flags, supported or refused.
	Kube KubeOptions
	// EtcdClient are kube's flags of TLS to etcd, per-resource servers
	// and the etcd checks' timeouts.
	EtcdClient EtcdClientOptions
	// ServiceNodePortRepairInterval is how often the node ports are
	// repaired (0: kube's 3 min). Not a flag: tests shorten it.
	ServiceNodePortRepairInterval time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		DataDir:                    "miniapiserver-data",
		EtcdPrefix:                 "/registry",
		EtcdCompactionInterval:     5 * time.Minute,
		EtcdDefragInterval:         time.Minute,
		EtcdDefragThreshold:        0.5,
		BindAddress:                "127.0.0.1",
		EndpointReconcilerType:     "lease",
		EndpointReconcilerTTL:      15 * time.Second,
		EndpointReconcilerInterval: 10 * time.Second,
		SecurePort:                 6443,
		InsecureBindAddr:           "127.0.0.1",
		WatchCache:                 true,
		StorageMediaType:           defaultStorageMediaType,
		WatchCacheEncodingBudget:   64 << 20,
		MinRequestTimeout:          1800 * time.Second,
		RequestTimeout:             time.Minute,
		ShutdownTimeout:            10 * time.Second,
		EventTTL:                   time.Hour,
		ServiceClusterIPRange:      core.DefaultServiceClusterIPRange.String(),
		LogLevel:                   "info",
		NamespaceController:        true,
		Controllers:                []string{"*"},
		AllowPrivileged:            true,
		Admission:                  defaultAdmissionOptions(),
		Auth:                       defaultAuthOptions(),
		Audit:                      defaultAuditOptions(),
		Kubelet:                    defaultKubeletOptions(),
		EmbeddedEtcd:               defaultEmbeddedEtcdOptions(),
		Logging:                    defaultLoggingOptions(),
		Kube:                       defaultKubeOptions(),
		EtcdClient:                 defaultEtcdClientOptions(),
	}
}

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	// Last, whatever is added below: kube's flags not registered by then.
	defer o.Kube.refused.addRefusedKubeFlags(fs)
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers,
		"Comma separated etcd client URLs (https://host:2379, or http://), the members of one etcd cluster: the client fails over between them. https:// servers are verified with --etcd-cafile, and given --etcd-certfile. Empty: run an embedded etcd with its data in --data-dir, on loopback only, over TLS with client certificates (see --data-dir).")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory for the embedded etcd's data, the generated serving certificate, admin token and kubeconfig. Created if missing.")
	fs.StringVar(&o.EtcdPrefix, "etcd-prefix", o.EtcdPrefix, "Prefix of every key this server writes in etcd.")
	fs.DurationVar(&o.EtcdCompactionInterval, "etcd-compaction-interval", o.EtcdCompactionInterval,
		"How often to compact etcd's history (0 disables compaction by this server).")
	fs.DurationVar(&o.EtcdDefragInterval, "etcd-defrag-interval", o.EtcdDefragInterval,
		"How often to check etcd's database: a member whose file is at least --etcd-defrag-threshold free is defragmented, and an exhausted space quota (NOSPACE alarm) is recovered from by compacting etcd's history, defragmenting and disarming the alarm. 0 turns both off. With --etcd-servers the default is 0: that etcd is its operator's to defragment (a member serves nothing while it is defragmented: seconds for a database of a few GiB), and kube-apiserver never does.")
	fs.Float64Var(&o.EtcdDefragThreshold, "etcd-defrag-threshold", o.EtcdDefragThreshold,
		"Share of an etcd member's database file that must be free (no longer in use after compactions) for it to be defragmented, between 0 and 1.")
	fs.BoolVar(&o.EtcdUnsafeNoFsync, "embedded-etcd-unsafe-no-fsync", o.EtcdUnsafeNoFsync,
		"Do not fsync the embedded etcd's writes: faster, and loses data on a crash. For tests and benchmarks only.")
	fs.Int64Var(&o.EtcdQuotaBackendBytes, "embedded-etcd-quota-backend-bytes", o.EtcdQuotaBackendBytes,
		"Space quota of the embedded etcd's database (etcd's --quota-backend-bytes): past it, writes fail until space is recovered (see --etcd-defrag-interval). 0: etcd's default, 2 GiB.")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address the secure port listens on (0.0.0.0 for all interfaces).")
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress,
		"IP address on which to advertise this server to members of the cluster: the endpoints of the kubernetes Service list it. Empty: --bind-address, or 127.0.0.1 when that is unspecified.")
	fs.StringVar(&o.EndpointReconcilerType, "endpoint-reconciler-type", o.EndpointReconcilerType,
		"How the endpoints of the kubernetes Service are kept: lease (each replica holds a Lease apiserver-<id> in kube-system; the endpoints list the replicas whose leases are live, and a replica stopped gracefully removes itself), master-count (kube's older way: each replica adds itself, and the list is cut to --apiserver-count addresses) or none.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "HTTPS port of the API (0 picks a free port).")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile,
		"Serving certificate (PEM). Without it, a self-signed certificate for the bind address and localhost is generated in --data-dir and reused.")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "Private key (PEM) of --tls-cert-file.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir,
		"Directory of the serving certificate, as kube's: apiserver.crt and apiserver.key are served when there, generated there (self-signed) when not. Ignored with --tls-cert-file. Without --data-dir, also where the server keeps the files it generates.")
	fs.BoolVar(&o.AllowPrivileged, "allow-privileged", o.AllowPrivileged,
		"Admit privileged containers. miniapiserver always does: false is refused.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile,
		`Static bearer tokens, kube's CSV format: token,user,uid,"group1,group2". Without it, an admin token is generated once in --data-dir, a second way in of the generated kubeconfig.`)
	fs.IntVar(&o.InsecurePort, "insecure-port", o.InsecurePort,
		"Plain HTTP port without authentication, for curl (0: off). Every request on it acts as an administrator (system:unsecured in system:masters).")
	fs.StringVar(&o.InsecureBindAddr, "insecure-bind-address", o.InsecureBindAddr,
		"IP address of --insecure-port. Must be a loopback address unless --insecure-allow-remote is set.")
	fs.BoolVar(&o.InsecureAllowRemote, "insecure-allow-remote", o.InsecureAllowRemote,
		"Allow --insecure-bind-address to be a non-loopback address: anyone who reaches it is an administrator.")
	fs.StringVar(&o.EncryptionProviderConfig, "encryption-provider-config", o.EncryptionProviderConfig,
		"The file (apiserver.config.k8s.io/v1 EncryptionConfiguration) of the providers that encrypt the values of resources in etcd: the first of a resource's providers writes, all read. Values are stored as kube-apiserver stores them.")
	fs.StringVar(&o.StorageMediaType, "storage-media-type", o.StorageMediaType,
		"The media type built-in objects are stored in: application/json, application/yaml or application/vnd.kubernetes.protobuf (kube-apiserver's default). Custom resources are stored as JSON. Values of every media type are read, whatever this says.")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "Serve LIST and WATCH from a watch cache in front of etcd.")
	fs.StringSliceVar(&o.WatchCacheSizes, "watch-cache-sizes", o.WatchCacheSizes,
		"Per resource watch cache sizes, resource[.group]#size, comma separated (deployments.apps#0 turns the cache off for deployments).")
	fs.Int64Var(&o.WatchCacheEncodingBudget, "watch-cache-encoding-budget", o.WatchCacheEncodingBudget,
		"Bytes of protobuf encodings the watch caches keep beside the stored objects, all resources together, so that protobuf LISTs reuse them (0: encode every item at every LIST).")
	fs.Int64Var(&o.WatchCacheHistoryBytes, "watch-cache-history-bytes", o.WatchCacheHistoryBytes,
		"Bytes of objects each resource's watch cache keeps in its event history, the last ~75 s of changes that watches resume from (0: no bound but the event count, as kube-apiserver). Past it older events are forgotten sooner, and a watch resuming from before them gets 410 Gone and relists.")
	fs.Var(secondsValue{&o.MinRequestTimeout}, "min-request-timeout",
		"Seconds (as kube's; a Go duration such as 30m is read too): a watch without timeoutSeconds ends after a random time between this and twice this (0: it does not time out).")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout,
		"How long a request other than a watch may take before it fails with a timeout.")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration,
		"On SIGTERM or SIGINT, how long to keep serving every request while /readyz fails, so that load balancers stop sending requests here before the server stops accepting them. A second signal stops the server at once.")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout,
		"Once the server stops accepting requests (after --shutdown-delay-duration), how long the requests in flight get to finish; watches end at once, their streams closed cleanly.")
	fs.IntVar(&o.HTTP2MaxStreamsPerConnection, "http2-max-streams-per-connection", o.HTTP2MaxStreamsPerConnection,
		"The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection (0: 100, kube-apiserver's default).")
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "How long events are kept.")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange,
		"CIDR of the cluster IPs services get (an IPv4 CIDR of at most 2^20 addresses, or an IPv6 CIDR of /64 or longer); two CIDRs of different families, comma separated, make a dual-stack cluster whose primary family is the first's.")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Serve /debug/pprof on the API ports.")
	o.addControllerFlags(fs)
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "Log level: debug, info, warn or error.")
	o.Auth.addFlags(fs)
	o.Audit.addFlags(fs)
	o.Admission.addFlags(fs)
	o.Kubelet.addFlags(fs)
	o.EmbeddedEtcd.addFlags(fs)
	o.Logging.addFlags(fs)
	o.Kube.addFlags(fs)
	o.EtcdClient.addFlags(fs)
}

// Validate checks the flag values; each error names its flag.
func (o *Options) Validate() error {
	for _, validate := range []func() error{o.validateStorage, o.validateServing, o.validateLimits} {
		if err := validate(); err != nil {
			return err
		}
	}
	if err := o.Admission.validate(); err != nil {
		return err
	}
	if err := o.validateServiceRanges(); err != nil {
		return err
	}
	switch o.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", o.LogLevel)
	}
	if err := o.Auth.validate(); err != nil {
		return err
	}
	if err := o.Audit.validate(); err != nil {
		return err
	}
	if err := o.EmbeddedEtcd.validate(o.EtcdServers); err != nil {
		return err
	}
	if err := o.Logging.validate(o.LogLevel); err != nil {
		return err
	}
	if err := o.Kube.validate(o.Auth.EnablePriorityAndFairness); err != nil {
		return err
	}
	return o.Kubelet.validate()
}

// validateStorage checks the flags of etcd and of what is stored.
func (o *Options) validateStorage() error {
	for _, s := range o.EtcdServers {
		if err := checkEtcdURL(s); err != nil {
			return fmt.Errorf("--etcd-servers: %w", err)
		}
	}
	if err := o.EtcdClient.validate(o.EtcdServers); err != nil {
		return err
	}
	if err := o.validateControllers(); err != nil {
		return err
	}
	if o.EtcdDefragInterval < 0 {
		return fmt.Errorf("--etcd-defrag-interval: must not be negative")
	}
	if !(o.EtcdDefragThreshold > 0 && o.EtcdDefragThreshold <= 1) {
		return fmt.Errorf("--etcd-defrag-threshold: %v is not in (0, 1]", o.EtcdDefragThreshold)
	}
	if o.EtcdQuotaBackendBytes < 0 {
		return fmt.Errorf("--embedded-etcd-quota-backend-bytes: must not be negative")
	}
	if o.DataDir == "" {
		return fmt.Errorf("--data-dir: must not be empty")
	}
	if err := validateStorageMediaType(o.StorageMediaType); err != nil {
		return err
	}
	if !strings.HasPrefix(o.EtcdPrefix, "/") || strings.HasSuffix(o.EtcdPrefix, "/") {
		return fmt.Errorf("--etcd-prefix: %q must start with / and not end with /", o.EtcdPrefix)
	}
	return nil
}

// validateServing checks the flags of the addresses and ports served on,
// and of their certificates.
func (o *Options) validateServing() error {
	if net.ParseIP(o.BindAddress) == nil {
		return fmt.Errorf("--bind-address: %q is not an IP address", o.BindAddress)
	}
	if o.AdvertiseAddress != "" {
		if a, err := netip.ParseAddr(o.AdvertiseAddress); err != nil || a.IsUnspecified() {
			return fmt.Errorf("--advertise-address: %q is not an IP address a client can reach", o.AdvertiseAddress)
		}
	}
	switch o.EndpointReconcilerType {
	case "lease", "master-count", "none":
	default:
		return fmt.Errorf("--endpoint-reconciler-type: %q is not one of lease, master-count, none", o.EndpointReconcilerType)
	}
	if o.EndpointReconcilerType != "none" && (o.EndpointReconcilerTTL < time.Second || o.EndpointReconcilerInterval <= 0) {
		return fmt.Errorf("--endpoint-reconciler-type: the lease needs a duration of at least 1s and a positive renewal interval")
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		return fmt.Errorf("--secure-port: %d is not a port (0-65535)", o.SecurePort)
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file: set both or neither")
	}
	for flag, path := range map[string]string{"--tls-cert-file": o.TLSCertFile, "--tls-private-key-file": o.TLSPrivateKeyFile, "--token-auth-file": o.TokenAuthFile} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%s: %v", flag, err)
		}
	}
	if o.InsecurePort < 0 || o.InsecurePort > 65535 {
		return fmt.Errorf("--insecure-port: %d is not a port (0-65535)", o.InsecurePort)
	}
	ip := net.ParseIP(o.InsecureBindAddr)
	if ip == nil {
		return fmt.Errorf("--insecure-bind-address: %q is not an IP address", o.InsecureBindAddr)
	}
	if o.InsecurePort != 0 && !ip.IsLoopback() && !o.InsecureAllowRemote {
		return fmt.Errorf("--insecure-bind-address: %s is not a loopback address; the insecure port has no authentication (set --insecure-allow-remote to allow it)", o.InsecureBindAddr)
	}
	return nil
}

// validateLimits checks the flags of the watch caches, the requests and
// what the server keeps.
func (o *Options) validateLimits() error {
	if _, err := parseWatchCacheSizes(o.WatchCacheSizes); err != nil {
		return err
	}
	if o.WatchCacheEncodingBudget < 0 {
		return fmt.Errorf("--watch-cache-encoding-budget: must not be negative")
	}
	if o.WatchCacheHistoryBytes < 0 {
		return fmt.Errorf("--watch-cache-history-bytes: must not be negative")
	}
	if o.ShutdownDelayDuration < 0 {
		return fmt.Errorf("--shutdown-delay-duration: must not be negative")
	}
	if o.HTTP2MaxStreamsPerConnection < 0 {
		return fmt.Errorf("--http2-max-streams-per-connection: must not be negative")
	}
	if o.RequestTimeout <= 0 {
		return fmt.Errorf("--request-timeout: must be positive")
	}
	if o.MinRequestTimeout < 0 {
		return fmt.Errorf("--min-request-timeout can not be negative value")
	}
	if o.EventTTL <= 0 {
		return fmt.Errorf("--event-ttl: must be positive")
	}
	if !o.AllowPrivileged {
		return fmt.Errorf("--allow-privileged: miniapiserver always admits privileged containers; false is not supported")
	}
	return nil
}

// advertiseAddress is --advertise-address, or its default.
func (o *Options) advertiseAddress() netip.Addr {
	if a, err := netip.ParseAddr(o.AdvertiseAddress); err == nil {
		return a
	}
	if a, err := netip.ParseAddr(o.BindAddress); err == nil && !a.IsUnspecified() {
		return a
	}
	return netip.MustParseAddr("127.0.0.1")
}

// parseWatchCacheSizes reads resource[.group]#size entries. The resources
// named are checked against those served when the server is built.
func parseWatchCacheSizes(entries []string) (map[string]int, error) {
	sizes := map[string]int{}
	for _, e := range entries {
		name, size, ok := strings.Cut(e, "#")
		if !ok || name == "" {
			return nil, fmt.Errorf("--watch-cache-sizes: entry %q: want resource[.group]#size", e)
		}
		n, err := strconv.Atoi(size)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--watch-cache-sizes: entry %q: size must be a non-negative integer", e)
		}
		sizes[name] = n
	}
	return sizes, nil
}

// validateServiceRanges checks --service-cluster-ip-range, and kube's
// rule that default/kubernetes, single-stack of the primary family, can
// list the advertised address.
func (o *Options) validateServiceRanges() error {
	ranges, err := o.serviceClusterIPRanges()
	if err != nil {
		return err
	}
	if a, err := netip.ParseAddr(o.AdvertiseAddress); err == nil && o.EndpointReconcilerType != "none" && a.Is4() != ranges[0].Addr().Is4() {
		return fmt.Errorf("service IP family %q must match public address family %q", ranges[0], a)
	}
	return nil
}

// serviceClusterIPRanges parses --service-cluster-ip-range: one CIDR, or
// two of different families (a dual-stack cluster, the first the primary
// family), with kube's messages where it has them. Each is a CIDR (not
// an address with a mask), IPv4 up to /12, IPv6 /64 or longer (kube's
// limits with its ServiceCIDR allocator).
func (o *Options) serviceClusterIPRanges() ([]netip.Prefix, error) {
	entries := strings.Split(o.ServiceClusterIPRange, ",")
	if len(entries) > 2 {
		return nil, fmt.Errorf("--service-cluster-ip-range must not contain more than two entries")
	}
	var ranges []netip.Prefix
	for _, e := range entries {
		p, err := netip.ParsePrefix(strings.TrimSpace(e))
		if err != nil {
			return nil, fmt.Errorf("--service-cluster-ip-range: %q is not a CIDR", e)
		}
		if p != p.Masked() {
			return nil, fmt.Errorf("--service-cluster-ip-range: %q has host bits set (did you mean %s?)", e, p.Masked())
		}
		if p.Addr().Is4() && p.Bits() < 12 || p.Addr().Is6() && p.Bits() < 64 {
			return nil, fmt.Errorf("--service-cluster-ip-range: %s is too large (at most /12 for IPv4, /64 for IPv6)", p)
		}
		ranges = append(ranges, p)
	}
	if len(ranges) == 2 && ranges[0].Addr().Is4() == ranges[1].Addr().Is4() {
		return nil, fmt.Errorf("--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family")
	}
	return ranges, nil
}

// serveOptions are the settings of every listener.
func (o *Options) serveOptions() apiserver.ServeOptions {
	return apiserver.ServeOptions{ShutdownTimeout: o.ShutdownTimeout, HTTP2MaxStreamsPerConnection: o.HTTP2MaxStreamsPerConnection}
}

// DefaultsForEtcd sets the defaults that depend on which etcd is used,
// for the flags the command line left unset: an external etcd
// (--etcd-servers) is not defragmented by this server. fs is the parsed
// command line.
func (o *Options) DefaultsForEtcd(fs *pflag.FlagSet) {
	if len(o.EtcdServers) > 0 && !fs.Changed("etcd-defrag-interval") {
		o.EtcdDefragInterval = 0
	}
}
