package core

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/kubelet"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// podConnections finds pods and the kubelets they run on, for the
// subresources that reach them.
type podConnections struct {
	pods     rest.Getter
	kubelets *kubelet.Connections
	// proxy reaches pods' own servers (pods/proxy, services/proxy).
	proxy http.RoundTripper
}

func (c *podConnections) pod(ctx context.Context, name string) (*corev1.Pod, error) {
	obj, err := c.pods.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object type: %T", obj)
	}
	return pod, nil
}

// kubeletOf is the kubelet of the pod's node. A node that does not exist
// reads, as in kube (whose node lookup names the resource of the
// request), as a pod of the node's name not found.
func (c *podConnections) kubeletOf(ctx context.Context, pod *corev1.Pod) (*kubelet.ConnectionInfo, error) {
	info, err := c.kubelets.ConnectionInfo(ctx, pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), pod.Spec.NodeName)
	}
	return info, err
}

// podContainer is the container a request names, or the pod's only one;
// the errors are kube's.
func podContainer(pod *corev1.Pod, name string) (string, error) {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if name != "" {
		for _, n := range names {
			if n == name {
				return name, nil
			}
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
	}
	switch len(pod.Spec.Containers) {
	case 1:
		return pod.Spec.Containers[0].Name, nil
	case 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names))
}

// upgradeMethods are the methods of the streaming subresources: SPDY
// clients POST, WebSocket clients GET.
var upgradeMethods = []string{"GET", "POST"}

// proxyMethods are the methods the proxy subresources pass on.
var proxyMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// proxyConnecter is what the proxy subresources (of pods, services and
// nodes) share, to embed: they store nothing of their own (New gives
// their options), pass on proxyMethods, are scoped as their resource is,
// take options of kind O, with the proxied path in "path", and differ
// only in the location they find for a request (locate, their own
// location method).
type proxyConnecter[O any, P interface {
	*O
	runtime.Object
}] struct {
	storeless[O, P]
	locate proxyLocation
}

// The proxy subresources are scoped Connecters through proxyConnecter.
var _, _, _ interface {
	rest.Connecter
	rest.Scoper
} = (*PodProxyREST)(nil), (*ServiceProxyREST)(nil), (*NodeProxyREST)(nil)

// ConnectMethods implements rest.Connecter.
func (proxyConnecter[O, P]) ConnectMethods() []string { return proxyMethods }

// NewConnectOptions implements rest.Connecter.
func (proxyConnecter[O, P]) NewConnectOptions() (runtime.Object, bool, string) {
	return P(new(O)), true, "path"
}

// options are a Connect's options, which the handler decoded as
// NewConnectOptions asked.
func (proxyConnecter[O, P]) options(options runtime.Object) (P, error) {
	opts, ok := options.(P)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", options)
	}
	return opts, nil
}

// proxyLocation is where a proxy subresource passes the request its id
// names, and the transport that reaches it.
type proxyLocation func(ctx context.Context, id string) (*url.URL, http.RoundTripper, error)

// Connect implements rest.Connecter: the options are checked first, then
// the location found, and the options' path joined to the location's.
func (p proxyConnecter[O, P]) Connect(ctx context.Context, id string, options runtime.Object, responder rest.Responder) (http.Handler, error) {
	opts, err := p.options(options)
	if err != nil {
		return nil, err
	}
	loc, transport, err := p.locate(ctx, id)
	if err != nil {
		return nil, err
	}
	loc.Path = utilnet.JoinPreservingTrailingSlash(loc.Path, proxyPath(opts))
	return proxyHandler(loc, transport, responder), nil
}

// proxyPath is the path of the proxy options (the three kinds share the
// field but no method to read it). proxyConnecter is instantiated with
// these three alone, so any other kind is a programming error.
func proxyPath(options runtime.Object) string {
	switch o := options.(type) {
	case *corev1.PodProxyOptions:
		return o.Path
	case *corev1.ServiceProxyOptions:
		return o.Path
	case *corev1.NodeProxyOptions:
		return o.Path
	}
	panic(fmt.Sprintf("not proxy options: %T", options))
}

// StreamREST serves pods/exec, pods/attach and pods/portforward: the
// request must be an upgrade (SPDY or WebSocket), and is passed, with
// its streams, to the kubelet of the pod's node, at
// /exec|attach/NAMESPACE/POD/CONTAINER or /portForward/NAMESPACE/POD.
type StreamREST struct {
	conns *podConnections
	// kind is "exec", "attach" or "portforward".
	kind string
}

var (
	_ rest.Connecter = (*StreamREST)(nil)
	_ rest.Scoper    = (*StreamREST)(nil)
)

// New implements rest.Storage: the kind of the subresource's options.
func (r *StreamREST) New() runtime.Object {
	obj, _, _ := r.NewConnectOptions()
	return obj
}

// Destroy implements rest.Storage.
func (r *StreamREST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *StreamREST) NamespaceScoped() bool { return true }

// ConnectMethods implements rest.Connecter.
func (r *StreamREST) ConnectMethods() []string { return upgradeMethods }

// NewConnectOptions implements rest.Connecter.
func (r *StreamREST) NewConnectOptions() (runtime.Object, bool, string) {
	switch r.kind {
	case "exec":
		return &corev1.PodExecOptions{}, false, ""
	case "attach":
		return &corev1.PodAttachOptions{}, false, ""
	}
	return &corev1.PodPortForwardOptions{}, false, ""
}

// Connect implements rest.Connecter.
func (r *StreamREST) Connect(ctx context.Context, name string, options runtime.Object, responder rest.Responder) (http.Handler, error) {
	pod, err := r.conns.pod(ctx, name)
	if err != nil {
		return nil, err
	}
	query, container, err := streamQuery(options)
	if err != nil {
		return nil, err
	}
	path := "/portForward/" + pod.Namespace + "/" + pod.Name
	if r.kind != "portforward" {
		if container, err = podContainer(pod, container); err != nil {
			return nil, err
		}
		path = "/" + r.kind + "/" + pod.Namespace + "/" + pod.Name + "/" + container
	}
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	kubelet, err := r.conns.kubeletOf(ctx, pod)
	if err != nil {
		return nil, err
	}
	loc := &url.URL{Scheme: kubelet.Scheme, Host: kubelet.Host(), Path: path, RawQuery: query.Encode()}
	return proxy.NewUpgradeAwareHandler(loc, kubelet.Transport, false, true, proxy.NewErrorResponder(responder)), nil
}

// streamQuery is the kubelet's query for the options of a streaming
// subresource, and the container they name.
func streamQuery(options runtime.Object) (url.Values, string, error) {
	q := url.Values{}
	flag := func(on bool, name string) {
		if on {
			q.Add(name, "1")
		}
	}
	switch o := options.(type) {
	case *corev1.PodExecOptions:
		flag(o.Stdin, corev1.ExecStdinParam)
		flag(o.Stdout, corev1.ExecStdoutParam)
		flag(o.Stderr, corev1.ExecStderrParam)
		flag(o.TTY, corev1.ExecTTYParam)
		for _, c := range o.Command {
			q.Add("command", c)
		}
		return q, o.Container, nil
	case *corev1.PodAttachOptions:
		flag(o.Stdin, corev1.ExecStdinParam)
		flag(o.Stdout, corev1.ExecStdoutParam)
		flag(o.Stderr, corev1.ExecStderrParam)
		flag(o.TTY, corev1.ExecTTYParam)
		return q, o.Container, nil
	case *corev1.PodPortForwardOptions:
		if len(o.Ports) > 0 {
			ports := make([]string, len(o.Ports))
			for i, p := range o.Ports {
				ports[i] = strconv.FormatInt(int64(p), 10)
			}
			q.Add(corev1.PortHeader, strings.Join(ports, ","))
		}
		return q, "", nil
	}
	return nil, "", fmt.Errorf("unknown object for streaming: %T", options)
}

// PodProxyREST serves pods/proxy and pods/proxy/{path}: requests passed
// to the pod's IP, at the port the name gives ([scheme:]name[:port]) or
// the pod's first declared container port.
type PodProxyREST struct {
	proxyConnecter[corev1.PodProxyOptions, *corev1.PodProxyOptions]
	conns *podConnections
}

// location is the pod's IP at the port the id names, reached with the
// proxy transport. Only a global unicast pod IP is reached, as in kube:
// never the server's own loopback.
func (r *PodProxyREST) location(ctx context.Context, id string) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", id))
	}
	pod, err := r.conns.pod(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if ip := netutils.ParseIPSloppy(podIP); ip == nil || !ip.IsGlobalUnicast() {
		return nil, nil, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme, Host: podIP}
	if port != "" {
		loc.Host = net.JoinHostPort(podIP, port)
	} else if strings.Contains(podIP, ":") {
		loc.Host = "[" + podIP + "]"
	}
	return loc, r.conns.proxy, nil
}

// proxyHandler passes requests (and upgrades) to loc, rewriting links in
// HTML answers to go back through the server, as kube's proxy
// subresources do.
func proxyHandler(loc *url.URL, transport http.RoundTripper, responder rest.Responder) http.Handler {
	return proxy.NewUpgradeAwareHandler(loc, transport, true, false, proxy.NewErrorResponder(responder))
}

// newProxyTransport is the transport to pods' and nodes' own servers
// (kube's proxy transport): their certificates are not verified.
func newProxyTransport() http.RoundTripper {
	return utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as kube-apiserver's
	})
}

// proxies declares the subresources that reach kubelets, pods and
// services, each with its resource: nodes/proxy, pods/log, exec, attach,
// portforward, proxy and services/proxy. They share one transport to
// pods' and nodes' own servers, and the kubelets' connections, made from
// the nodes' Store when nodes/proxy is built: nodes are built before pods.
type proxies struct {
	kubelet   kubelet.Config
	transport http.RoundTripper
	kubelets  *kubelet.Connections
}

func newProxies(cfg kubelet.Config) *proxies {
	return &proxies{kubelet: cfg, transport: newProxyTransport()}
}

// nodes declares nodes/proxy, and makes the kubelets' connections.
func (x *proxies) nodes() map[string]generic.SubresourceFunc {
	return map[string]generic.SubresourceFunc{
		"nodes/proxy": func(nodes *generic.Store) (rest.Storage, error) {
			kubelets, err := kubelet.NewConnections(nodes, x.kubelet)
			if err != nil {
				return nil, err
			}
			x.kubelets = kubelets
			r := &NodeProxyREST{kubelets: kubelets, proxy: x.transport}
			r.clusterScoped, r.locate = true, r.location
			return r, nil
		},
	}
}

// pods declares pods/log, exec, attach, portforward and proxy, over the
// kubelets' connections of nodes/proxy.
func (x *proxies) pods() map[string]generic.SubresourceFunc {
	conns := func(pods *generic.Store) (*podConnections, error) {
		if x.kubelets == nil {
			return nil, errors.New("core: pods' connect subresources declared before nodes/proxy was built")
		}
		return &podConnections{pods: pods, kubelets: x.kubelets, proxy: x.transport}, nil
	}
	subresources := map[string]generic.SubresourceFunc{
		"pods/log": func(pods *generic.Store) (rest.Storage, error) {
			c, err := conns(pods)
			if err != nil {
				return nil, err
			}
			return &LogREST{conns: c}, nil
		},
		"pods/proxy": func(pods *generic.Store) (rest.Storage, error) {
			c, err := conns(pods)
			if err != nil {
				return nil, err
			}
			r := &PodProxyREST{conns: c}
			r.locate = r.location
			return r, nil
		},
	}
	for _, kind := range []string{"exec", "attach", "portforward"} {
		subresources["pods/"+kind] = func(pods *generic.Store) (rest.Storage, error) {
			c, err := conns(pods)
			if err != nil {
				return nil, err
			}
			return &StreamREST{conns: c, kind: kind}, nil
		}
	}
	return subresources
}

// services declares services/proxy, which reaches the services' pods
// through pods and the EndpointSlices (slices, nil: none).
func (x *proxies) services(pods rest.Getter, slices rest.Lister, family discoveryv1.AddressType) map[string]generic.SubresourceFunc {
	return map[string]generic.SubresourceFunc{
		"services/proxy": func(services *generic.Store) (rest.Storage, error) {
			r := &ServiceProxyREST{services: services, pods: pods, slices: slices, family: family, proxy: x.transport}
			r.locate = r.location
			return r, nil
		},
	}
}
