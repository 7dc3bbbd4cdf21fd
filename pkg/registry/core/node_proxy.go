package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/kubelet"
)

// NodeProxyREST serves nodes/proxy and nodes/proxy/{path}: requests
// passed to the node's kubelet ([scheme:]name[:port] names another port
// of the node, reached without the kubelet's credentials).
type NodeProxyREST struct {
	proxyConnecter[corev1.NodeProxyOptions, *corev1.NodeProxyOptions] // cluster-scoped
	kubelets                                                          *kubelet.Connections
	proxy                                                             http.RoundTripper
}

// location is where a request for the node id goes, and how: the
// kubelet's port with its transport, or another port of the node with
// the proxy transport.
func (r *NodeProxyREST) location(ctx context.Context, id string) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", id))
	}
	info, err := r.kubelets.ConnectionInfo(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if err := proxyableHostname(ctx, info.Hostname); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if port == "" || port == info.Port {
		return &url.URL{Scheme: info.Scheme, Host: info.Host()}, info.Transport, nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(info.Hostname, port)}, r.proxy, nil
}

// proxyableHostname refuses, as kube does, a node whose address resolves
// to anything but global unicast addresses (the server's loopback, link
// local addresses): a node object must not make the server reach itself.
func proxyableHostname(ctx context.Context, hostname string) error {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, hostname)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return errors.New("no addresses for hostname")
	}
	for _, a := range addrs {
		if !a.IP.IsGlobalUnicast() {
			return errors.New("address not allowed")
		}
	}
	return nil
}
