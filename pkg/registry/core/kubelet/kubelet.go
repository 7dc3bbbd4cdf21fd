// Package kubelet is how the API server reaches a node's kubelet (kube's
// pkg/kubelet/client): the address and port of a node, and the HTTPS
// transports that present the server's client certificate to it. The
// node-proxying subresources (pods/log, pods/exec, nodes/proxy, ...) use
// it.
package kubelet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// DefaultPort is the kubelet's port when a node does not publish one
// (kube's ports.KubeletPort).
const DefaultPort = 10250

// DefaultPreferredAddressTypes is the order in which a node's addresses
// are tried (kube-apiserver's --kubelet-preferred-address-types).
func DefaultPreferredAddressTypes() []string {
	return []string{
		string(corev1.NodeHostName),
		string(corev1.NodeInternalDNS), string(corev1.NodeInternalIP),
		string(corev1.NodeExternalDNS), string(corev1.NodeExternalIP),
	}
}

// DefaultTimeout is kube-apiserver's --kubelet-timeout.
const DefaultTimeout = 5 * time.Second

// Config is how to reach kubelets (kube's KubeletClientConfig). The zero
// value has kube's defaults.
type Config struct {
	// Port is the kubelet port of nodes that publish none (0: DefaultPort).
	Port int
	// PreferredAddressTypes orders node addresses (nil: the default).
	PreferredAddressTypes []string
	// CertFile and KeyFile are the client certificate presented to
	// kubelets (none when empty). They are read again for every new
	// connection, so a rotated certificate takes effect without a restart,
	// as kube's (ReloadTLSFiles) does.
	CertFile, KeyFile string
	// CAFile verifies the kubelets' serving certificates. Without it, as
	// in kube, they are not verified.
	CAFile string
	// Timeout bounds dialling a kubelet (0: DefaultTimeout).
	Timeout time.Duration
}

// ConnectionInfo is how to reach one node's kubelet.
type ConnectionInfo struct {
	Scheme, Hostname, Port string
	// Transport verifies the kubelet as Config says;
	// InsecureSkipTLSVerifyTransport does not (pods/log's
	// insecureSkipTLSVerifyBackend).
	Transport, InsecureSkipTLSVerifyTransport http.RoundTripper
}

// Host is the kubelet's host:port.
func (c *ConnectionInfo) Host() string { return net.JoinHostPort(c.Hostname, c.Port) }

// Connections finds the kubelet of a node from the Node object.
type Connections struct {
	nodes                        rest.Getter
	port                         int
	addressTypes                 []corev1.NodeAddressType
	transport, insecureTransport http.RoundTripper
}

// NewConnections returns the kubelet connections of the nodes nodes
// serves. It fails when the certificate files cannot be read.
func NewConnections(nodes rest.Getter, cfg Config) (*Connections, error) {
	cfg = cfg.withDefaults()
	tlsConfig, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	insecure := tlsConfig.Clone()
	insecure.InsecureSkipVerify, insecure.RootCAs = true, nil
	c := &Connections{
		nodes: nodes, port: cfg.Port,
		transport:         newTransport(tlsConfig, cfg.Timeout),
		insecureTransport: newTransport(insecure, cfg.Timeout),
	}
	for _, t := range cfg.PreferredAddressTypes {
		c.addressTypes = append(c.addressTypes, corev1.NodeAddressType(t))
	}
	return c, nil
}

// ConnectionInfo returns how to reach the kubelet of the named node: its
// first address of the preferred types, and the port it publishes in
// status.daemonEndpoints (or the default). A node without such an address
// is an error (500), as in kube.
func (c *Connections) ConnectionInfo(ctx context.Context, nodeName string) (*ConnectionInfo, error) {
	obj, err := c.nodes.Get(ctx, nodeName, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, fmt.Errorf("kubelet: not a node: %T", obj)
	}
	host, err := preferredAddress(node, c.addressTypes)
	if err != nil {
		return nil, err
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = c.port
	}
	return &ConnectionInfo{Scheme: "https", Hostname: host, Port: strconv.Itoa(port),
		Transport: c.transport, InsecureSkipTLSVerifyTransport: c.insecureTransport}, nil
}

// preferredAddress is the node's first address of the first type in
// types that it has; the error is kube's.
func preferredAddress(node *corev1.Node, types []corev1.NodeAddressType) (string, error) {
	for _, t := range types {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return a.Address, nil
			}
		}
	}
	return "", fmt.Errorf("no preferred addresses found; known addresses: %v", node.Status.Addresses)
}

func (cfg Config) withDefaults() Config {
	if cfg.Port <= 0 {
		cfg.Port = DefaultPort
	}
	if cfg.PreferredAddressTypes == nil {
		cfg.PreferredAddressTypes = DefaultPreferredAddressTypes()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return cfg
}

// tlsConfig is the client side of TLS to kubelets.
func (cfg Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile == "" {
		tc.InsecureSkipVerify = true
	} else {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("kubelet certificate authority: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kubelet certificate authority %s: no certificates", cfg.CAFile)
		}
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, fmt.Errorf("kubelet client certificate and key must be given together")
	}
	if cfg.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile); err != nil {
			return nil, fmt.Errorf("kubelet client certificate: %w", err)
		}
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
			return &cert, err
		}
	}
	return tc, nil
}

// newTransport is kube's client transport (proxy from the environment,
// HTTP/2, keep-alives) over tc, dialling for at most timeout.
func newTransport(tc *tls.Config, timeout time.Duration) http.RoundTripper {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig:     tc,
		DialContext:         dialer.DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
	})
}
