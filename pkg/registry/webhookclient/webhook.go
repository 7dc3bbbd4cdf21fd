// Package webhookclient calls the webhooks the API declares (the conversion
// webhooks of CustomResourceDefinitions; admission webhooks are the same
// kind of call): a JSON review POSTed over HTTPS to a URL, or to a
// service of the cluster, trusting the configuration's CA bundle, as
// kube's webhook client does.
//
// It sits in the registry: a service is found through the registry's
// stores (EndpointsResolver), never over HTTP.
package webhookclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// DefaultTimeout bounds a call whose caller sets no deadline (kube's
// conversion webhooks get 30 seconds).
const DefaultTimeout = 30 * time.Second

// maxResponseBytes bounds what a webhook may answer (kube reads at most
// as much as a request body may be).
const maxResponseBytes = 3 * 1024 * 1024

// ClientConfig is where a webhook is: a URL, or a service of the cluster
// (apiextensions' and admissionregistration's WebhookClientConfig).
type ClientConfig struct {
	// URL is https://host[:port][/path].
	URL string
	// Service, when set instead, is a service and the port and path to
	// call on it.
	Service *Service
	// CABundle is the PEM of the certificates to trust (none: the
	// system's roots).
	CABundle []byte
}

// Service is a webhook served by a service of the cluster.
type Service struct {
	Namespace, Name, Path string
	Port                  int32
}

// ServiceResolver finds an address serving a port of a service.
type ServiceResolver interface {
	ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (*url.URL, error)
}

// Client posts reviews to one webhook.
type Client struct {
	cfg      ClientConfig
	resolver ServiceResolver
	http     *http.Client
}

// New returns the client of the webhook cfg names; a service is found
// through resolver at each call.
func New(cfg ClientConfig, resolver ServiceResolver) (*Client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(bytes.TrimSpace(cfg.CABundle)) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CABundle) {
			return nil, fmt.Errorf("webhook: the caBundle holds no certificate")
		}
		tlsConfig.RootCAs = pool
	}
	switch {
	case cfg.Service != nil:
		if resolver == nil {
			return nil, fmt.Errorf("webhook: no resolver of services")
		}
		// The certificate names the service as kube calls it.
		tlsConfig.ServerName = cfg.Service.Name + "." + cfg.Service.Namespace + ".svc"
	case cfg.URL != "":
		u, err := url.Parse(cfg.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("webhook: %q is not an https URL", cfg.URL)
		}
	default:
		return nil, fmt.Errorf("webhook: neither a URL nor a service")
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 16,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}
	return &Client{cfg: cfg, resolver: resolver, http: &http.Client{Transport: transport}}, nil
}

// Post sends review as JSON and decodes the answer into out. A call
// without a deadline gets DefaultTimeout. A status other than 200 is an
// error naming it, as kube's client words it.
func (c *Client) Post(ctx context.Context, review, out interface{}) error {
	return c.post(ctx, false, review, out)
}

// PostWithTimeout is Post telling the webhook how long it has: the time
// left before ctx's deadline, in whole seconds rounded up, as the query
// parameter timeout (what kube's admission webhooks are told).
func (c *Client) PostWithTimeout(ctx context.Context, review, out interface{}) error {
	return c.post(ctx, true, review, out)
}

func (c *Client) post(ctx context.Context, tellTimeout bool, review, out interface{}) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	target, err := c.url(ctx)
	if err != nil {
		return err
	}
	if deadline, _ := ctx.Deadline(); tellTimeout {
		if left := time.Until(deadline); left > 0 {
			if whole := left.Truncate(time.Second); whole != left {
				left = whole + time.Second
			}
			target = withQuery(target, "timeout", left.String())
		}
	}
	body, err := json.Marshal(review)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxResponseBytes {
		return fmt.Errorf("the webhook's response is larger than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server responded with the status code %d but did not return more information (post %s)", resp.StatusCode, target)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the webhook's response: %w", err)
	}
	return nil
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// url is where to post: the configured URL, or an endpoint of the
// service with its path.
func (c *Client) url(ctx context.Context) (string, error) {
	svc := c.cfg.Service
	if svc == nil {
		return c.cfg.URL, nil
	}
	u, err := c.resolver.ResolveEndpoint(ctx, svc.Namespace, svc.Name, svc.Port)
	if err != nil {
		return "", err
	}
	u.Path = svc.Path
	return u.String(), nil
}

// withQuery is target with the query parameter key=value added.
func withQuery(target, key, value string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// hostPort is host:port for a URL.
func hostPort(host string, port int32) string { return net.JoinHostPort(host, strconv.Itoa(int(port))) }
