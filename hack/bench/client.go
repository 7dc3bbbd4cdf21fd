package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Client speaks the Kubernetes REST API with plain net/http, so the tool
// measures any server (kube-apiserver included) and not a client library.
type Client struct {
	base    *url.URL
	token   string
	hc      *http.Client
	timeout time.Duration
}

// ClientOptions configure a Client.
type ClientOptions struct {
	Server   string
	Token    string
	Insecure bool
	CAFile   string
	// CertFile and KeyFile are a client certificate to authenticate with.
	CertFile, KeyFile string
	AllowRemote       bool
	// IdleConns is how many idle connections to keep per host: at least the
	// number of requests in flight, or HTTP/1.1 would reconnect.
	IdleConns int
	// HTTP1 turns off HTTP/2 (negotiated over TLS by default).
	HTTP1 bool
	// Gzip asks for compressed responses (Accept-Encoding: gzip) as
	// client-go does; off, bodies come uncompressed and bytes are what the
	// server encoded.
	Gzip bool
	// RequestTimeout bounds each request but watches.
	RequestTimeout time.Duration
}

// NewClient checks that the server is on loopback (unless AllowRemote) and
// builds a client with keep-alive connections.
func NewClient(o ClientOptions) (*Client, error) {
	u, err := url.Parse(o.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server: %q is not an http:// or https:// URL", o.Server)
	}
	if err := checkLoopback(u.Hostname(), o.AllowRemote); err != nil {
		return nil, fmt.Errorf("--server: %w", err)
	}
	tlsCfg := &tls.Config{InsecureSkipVerify: o.Insecure} //nolint:gosec // opt-in flag
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file: no PEM certificate in %s", o.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cert-file: %w", err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	idle := max(o.IdleConns, 2)
	tr := &http.Transport{
		// No proxy: traffic goes to the server itself, on loopback.
		Proxy:               nil,
		DialContext:         dialer(o.AllowRemote).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   !o.HTTP1,
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  !o.Gzip,
	}
	if o.HTTP1 {
		// A non-nil empty map is how net/http is told not to negotiate h2.
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &Client{base: u, token: o.Token, hc: &http.Client{Transport: tr}, timeout: o.RequestTimeout}, nil
}

// dialer refuses, at connect time, any address that is not loopback: a
// second check after the URL's host was resolved, in case it resolves
// differently now.
func dialer(allowRemote bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowRemote {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("refusing to connect to %s: not loopback (use --allow-remote)", address)
			}
			return nil
		}
	}
	return d
}

// checkLoopback resolves host and fails unless every address is loopback.
func checkLoopback(host string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return fmt.Errorf("resolving %q: %w", host, err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("%q resolves to %s, which is not loopback (use --allow-remote)", host, ip)
		}
	}
	return nil
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Code, e.Body)
}

// isStatus reports whether err is a StatusError with code.
func isStatus(err error, code int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == code
}

// Response is a finished request.
type Response struct {
	Proto string
	// Bytes is the body's length (after decompression, if any).
	Bytes int64
	// Body is the body, when the caller asked to keep it.
	Body []byte
}

// Do sends a request and reads the whole body, keeping it if keep is set
// and otherwise only counting it: either way the body is drained, so that
// the connection goes back to the pool. A non-2xx status is a *StatusError.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body []byte, contentType string, keep bool) (Response, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := c.send(ctx, method, path, query, body, contentType)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	out := Response{Proto: resp.Proto}
	if keep || resp.StatusCode/100 != 2 {
		var buf bytes.Buffer
		if resp.ContentLength > 0 {
			buf.Grow(int(resp.ContentLength))
		}
		out.Bytes, err = buf.ReadFrom(resp.Body)
		out.Body = buf.Bytes()
	} else {
		out.Bytes, err = io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		return out, fmt.Errorf("%s %s: reading body: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		msg := string(out.Body)
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return out, &StatusError{Code: resp.StatusCode, Body: msg}
	}
	return out, nil
}

// Stream opens a request whose body the caller reads and closes (a watch).
// It is bounded by ctx only. A non-2xx status is a *StatusError.
func (c *Client) Stream(ctx context.Context, path string, query url.Values) (*http.Response, error) {
	resp, err := c.send(ctx, http.MethodGet, path, query, nil, "")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, &StatusError{Code: resp.StatusCode, Body: string(b)}
	}
	return resp, nil
}

func (c *Client) send(ctx context.Context, method, path string, query url.Values, body []byte, contentType string) (*http.Response, error) {
	u := *c.base
	u.Path = path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return c.hc.Do(req)
}

// CloseIdle closes the pool's idle connections.
func (c *Client) CloseIdle() { c.hc.CloseIdleConnections() }

// configMapsPath is the collection of ConfigMaps in ns.
func configMapsPath(ns string) string { return "/api/v1/namespaces/" + ns + "/configmaps" }

// benchName is the name of the i-th benchmark ConfigMap.
func benchName(i int) string { return "bench-" + strconv.Itoa(i) }

// benchIndex returns i for a name bench-<i>, or -1.
func benchIndex(name string) int {
	const p = "bench-"
	if len(name) <= len(p) || name[:len(p)] != p {
		return -1
	}
	i, err := strconv.Atoi(name[len(p):])
	if err != nil || i < 0 || strconv.Itoa(i) != name[len(p):] {
		return -1
	}
	return i
}

// bucketOf is the bucket label value of the i-th ConfigMap: 100 buckets,
// so that a selector on one returns 1% of them.
func bucketOf(i int) string { return strconv.Itoa(i % 100) }

// payload returns size bytes of printable data, varied by i.
func payload(i, size int) string {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte('a' + (i+j)%26)
	}
	return string(b)
}

// configMapJSON is the body the tool creates for the i-th ConfigMap: one
// data key of size bytes and the label bucket=<i mod 100>.
func configMapJSON(ns string, i, size int) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + benchName(i) +
		`","namespace":"` + ns + `","labels":{"bucket":"` + bucketOf(i) + `"}},"data":{"data":"` + payload(i, size) + `"}}`)
}

// ensureNamespace creates ns unless it exists.
func (c *Client) ensureNamespace(ctx context.Context, ns string) error {
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns, nil, nil, "", false)
	if err == nil {
		return nil
	}
	if !isStatus(err, http.StatusNotFound) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`)
	_, err = c.Do(ctx, http.MethodPost, "/api/v1/namespaces", nil, body, "application/json", false)
	if err != nil && !isStatus(err, http.StatusConflict) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// ensureDefaultServiceAccount creates ns's ServiceAccount "default" unless
// it exists: without a controller-manager nothing else does, and the
// ServiceAccount admission step refuses pods until it exists.
func (c *Client) ensureDefaultServiceAccount(ctx context.Context, ns string) error {
	body := []byte(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default","namespace":"` + ns + `"}}`)
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts", nil, body, "application/json", false)
	if err != nil && !isStatus(err, http.StatusConflict) {
		return fmt.Errorf("creating service account %s/default: %w", ns, err)
	}
	return nil
}
