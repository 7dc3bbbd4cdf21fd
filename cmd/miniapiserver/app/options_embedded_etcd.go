package app

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/spf13/pflag"
)

// EmbeddedEtcdOptions are the flags of the embedded HA mode, as k3s
// offers it: each server's embedded etcd is a member of one etcd cluster.
type EmbeddedEtcdOptions struct {
	// ClusterInit starts a new cluster with this server's member.
	ClusterInit bool
	// Join is the peer URL of a member of the cluster to join.
	Join string
	// Name of this server's member (default: the host name).
	Name string
	// PeerURL and ClientURL are where the other members reach this one.
	PeerURL, ClientURL string
	// CAFile and CAKeyFile are the cluster's CA (default: etcd-ca.crt and
	// etcd-ca.key in --data-dir/pki).
	CAFile, CAKeyFile string
}

func defaultEmbeddedEtcdOptions() EmbeddedEtcdOptions {
	name, _ := os.Hostname()
	return EmbeddedEtcdOptions{Name: name}
}

func (o *EmbeddedEtcdOptions) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.ClusterInit, "embedded-etcd-cluster-init", o.ClusterInit,
		"Start a new etcd cluster whose first member is this server's embedded etcd (the embedded HA mode; other servers join it with --embedded-etcd-join). Generates the cluster's CA in --data-dir/pki when --embedded-etcd-ca-file is not there. Needs --embedded-etcd-peer-url. Ignored once --data-dir holds etcd data.")
	fs.StringVar(&o.Join, "embedded-etcd-join", o.Join,
		"Peer URL (https://host:2380) of a member of an embedded etcd cluster for this server's embedded etcd to join: it is added as a learner, then promoted to a voting member once caught up. A member of the same name or peer URL left over (its data lost) is replaced. Once --data-dir holds etcd data the member restarts from it; data of another cluster is refused. Needs --embedded-etcd-peer-url and the cluster's CA.")
	fs.StringVar(&o.Name, "embedded-etcd-name", o.Name, "Name of this server's member of the embedded etcd cluster, unique in it (default: the host name).")
	fs.StringVar(&o.PeerURL, "embedded-etcd-peer-url", o.PeerURL,
		"URL (https://host:2380) at which the other members of the embedded etcd cluster reach this one; it listens there (on every interface when host is a name).")
	fs.StringVar(&o.ClientURL, "embedded-etcd-client-url", o.ClientURL,
		"URL (https://host:2379) at which servers joining the cluster reach this member's client API, with TLS client certificates of the cluster's CA. Default: the peer URL's host, port 2379. This server itself uses a loopback port.")
	fs.StringVar(&o.CAFile, "embedded-etcd-ca-file", o.CAFile,
		"CA certificate (PEM) of the embedded etcd cluster: every member's certificate is signed by it. Default: --data-dir/pki/etcd-ca.crt. Copy it (and its key) from the first server to the others before they join.")
	fs.StringVar(&o.CAKeyFile, "embedded-etcd-ca-key-file", o.CAKeyFile,
		"Private key of --embedded-etcd-ca-file, with which this server signs its member certificate. Default: --data-dir/pki/etcd-ca.key.")
}

// memberName is what etcd accepts as a member name here: a DNS label,
// as host names are.
// It is compiled when a name is first checked (its counted repetition
// makes a large program), not at every start.
var memberName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
})

// validate checks the flags; only with --embedded-etcd-cluster-init or
// --embedded-etcd-join are the others used.
func (o *EmbeddedEtcdOptions) validate(etcdServers []string) error {
	if !o.enabled() {
		return nil
	}
	if o.ClusterInit && o.Join != "" {
		return fmt.Errorf("--embedded-etcd-cluster-init and --embedded-etcd-join: set one, not both")
	}
	if len(etcdServers) > 0 {
		return fmt.Errorf("--etcd-servers: not with the embedded etcd cluster flags (--embedded-etcd-cluster-init, --embedded-etcd-join)")
	}
	if !memberName().MatchString(o.Name) {
		return fmt.Errorf("--embedded-etcd-name: %q is not a valid member name (letters, digits, '.', '-', '_')", o.Name)
	}
	if o.PeerURL == "" {
		return fmt.Errorf("--embedded-etcd-peer-url: required with --embedded-etcd-cluster-init or --embedded-etcd-join")
	}
	flags := map[string]string{"--embedded-etcd-peer-url": o.PeerURL, "--embedded-etcd-client-url": o.ClientURL, "--embedded-etcd-join": o.Join}
	for flag, u := range flags {
		if err := checkHTTPSURL(u); u != "" && err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	if o.clientURL() == o.PeerURL {
		return fmt.Errorf("--embedded-etcd-client-url: must differ from --embedded-etcd-peer-url")
	}
	return nil
}

func (o *EmbeddedEtcdOptions) enabled() bool { return o.ClusterInit || o.Join != "" }

// checkHTTPSURL checks u is https://host:port with nothing else.
func checkHTTPSURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	if p.Scheme != "https" || p.Port() == "" || p.Hostname() == "" || (p.Path != "" && p.Path != "/") || p.RawQuery != "" {
		return fmt.Errorf("%q is not an https://host:port URL", u)
	}
	return nil
}

// clientURL is --embedded-etcd-client-url or its default.
func (o *EmbeddedEtcdOptions) clientURL() string {
	if o.ClientURL != "" {
		return o.ClientURL
	}
	p, _ := url.Parse(o.PeerURL)
	return (&url.URL{Scheme: "https", Host: net.JoinHostPort(p.Hostname(), "2379")}).String()
}

// caFiles are the cluster CA's certificate and key files.
func (o *EmbeddedEtcdOptions) caFiles(dataDir string) (certFile, keyFile string) {
	certFile, keyFile = o.CAFile, o.CAKeyFile
	if certFile == "" {
		certFile = filepath.Join(dataDir, "pki", "etcd-ca.crt")
	}
	if keyFile == "" {
		keyFile = filepath.Join(dataDir, "pki", "etcd-ca.key")
	}
	return certFile, keyFile
}
