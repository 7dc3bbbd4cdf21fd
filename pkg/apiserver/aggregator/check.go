package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// checkAttempts and the timeouts are kube's: five requests at once (to
// endpoints chosen at random each), any success passes; each gets 5 s,
// and 6 s in all.
const (
	checkAttempts     = 5
	checkTimeout      = 5 * time.Second
	checkTotalTimeout = 6 * time.Second
	// maxDiscoveryBytes bounds the document read from an extension server.
	maxDiscoveryBytes = 16 << 20
	// maxOpenAPIBytes bounds an OpenAPI document read from one.
	maxOpenAPIBytes = 64 << 20
)

// checkUser is who kube's aggregator checks extension servers as.
var checkUser = &user.DefaultInfo{Name: "system:kube-aggregator", Groups: []string{user.SystemPrivilegedGroup}}

// Check is the availability controller's discovery check of s (which
// names a service), as kube's: GET /apis/GROUP/VERSION of a resolved
// endpoint, as system:kube-aggregator, must answer 2xx. It returns the
// APIResourceList answered (nil when it was none), or kube's error:
// "failing or missing response from URL: ...".
func (p *Proxy) Check(ctx context.Context, s *apiregistrationv1.APIService) (*metav1.APIResourceList, error) {
	transport, fresh, err := p.transportFor(s)
	if err != nil {
		return nil, err
	}
	if fresh {
		defer transport.CloseIdleConnections()
	}
	client := &http.Client{
		Transport: transport, Timeout: checkTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	type result struct {
		list *metav1.APIResourceList
		err  error
	}
	results := make(chan result, checkAttempts)
	ctx, cancel := context.WithTimeout(ctx, checkTotalTimeout)
	defer cancel()
	for range checkAttempts {
		go func() {
			list, err := p.checkOnce(ctx, client, s)
			results <- result{list, err}
		}()
	}
	var last result
	for range checkAttempts {
		if last = <-results; last.err == nil {
			return last.list, nil
		}
	}
	transport.CloseIdleConnections()
	return nil, last.err
}

func (p *Proxy) checkOnce(ctx context.Context, client *http.Client, s *apiregistrationv1.APIService) (*metav1.APIResourceList, error) {
	port := int32(443)
	if s.Spec.Service.Port != nil {
		port = *s.Spec.Service.Port
	}
	loc, err := p.resolver.ResolveEndpoint(ctx, s.Spec.Service.Namespace, s.Spec.Service.Name, port)
	if err != nil {
		return nil, err
	}
	u := &url.URL{Scheme: "https", Host: loc.Host, Path: "/apis/" + s.Spec.Group + "/" + s.Spec.Version}
	if s.Name == "v1." {
		u.Path = "/api/" + s.Spec.Version
	}
	req, err := checkRequest(ctx, u)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("timed out waiting for %v", u)
		}
		return nil, fmt.Errorf("failing or missing response from %v: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
		return nil, fmt.Errorf("failing or missing response from %v: bad status from %v: %d", u, u, resp.StatusCode)
	}
	// The check passed; the document is discovery's, when it is one.
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBytes))
	list := &metav1.APIResourceList{}
	if err != nil || json.Unmarshal(data, list) != nil || list.GroupVersion != s.Spec.Group+"/"+s.Spec.Version {
		return nil, nil
	}
	return list, nil
}

// transportFor is the transport of the proxy's target for s when its TLS
// settings are the same, else a fresh one, for this check only (the
// check of a changed APIService may come before the proxy learns of the
// change).
func (p *Proxy) transportFor(s *apiregistrationv1.APIService) (t *http.Transport, fresh bool, err error) {
	in := tlsInputsOf(s)
	for _, target := range *p.targets.Load() {
		if target.name == s.Name && target.tls.equal(in) {
			return target.transport, false, target.transportErr
		}
	}
	t, err = newTransport(in, p.clientCert)
	return t, true, err
}

// CanCheck fails when s's TLS settings cannot make a transport (a
// caBundle without a certificate); kube's controller then leaves the
// condition as it is and tries again.
func (p *Proxy) CanCheck(s *apiregistrationv1.APIService) error {
	t, fresh, err := p.transportFor(s)
	if fresh && t != nil {
		t.CloseIdleConnections()
	}
	return err
}

// OpenAPI fetches s's server's /openapi/v2 document and its /openapi/v3
// document of s's group version, as system:kube-aggregator (kube's
// aggregator downloads them the same way to merge them). A document the
// server does not serve (404) is nil.
func (p *Proxy) OpenAPI(ctx context.Context, s *apiregistrationv1.APIService) (v2, v3 []byte, err error) {
	transport, fresh, err := p.transportFor(s)
	if err != nil {
		return nil, nil, err
	}
	if fresh {
		defer transport.CloseIdleConnections()
	}
	port := int32(443)
	if s.Spec.Service.Port != nil {
		port = *s.Spec.Service.Port
	}
	loc, err := p.resolver.ResolveEndpoint(ctx, s.Spec.Service.Namespace, s.Spec.Service.Name, port)
	if err != nil {
		return nil, nil, err
	}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	fetch := func(path string) ([]byte, error) {
		u := &url.URL{Scheme: "https", Host: loc.Host, Path: path}
		req, err := checkRequest(ctx, u)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return nil, nil
		case resp.StatusCode != http.StatusOK:
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxOpenAPIBytes))
		if err != nil {
			return nil, err
		}
		if !json.Valid(data) {
			return nil, fmt.Errorf("GET %s: not a JSON document", u)
		}
		return data, nil
	}
	if v2, err = fetch("/openapi/v2"); err != nil {
		return nil, nil, err
	}
	if v3, err = fetch("/openapi/v3/apis/" + s.Spec.Group + "/" + s.Spec.Version); err != nil {
		return nil, nil, err
	}
	return v2, v3, nil
}

// checkRequest is a GET of u for JSON, made as the availability checker's
// user.
func checkRequest(ctx context.Context, u *url.URL) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	SetUserHeaders(req.Header, checkUser)
	return req, nil
}
