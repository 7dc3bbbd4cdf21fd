package apiserver

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestOversizeBodyAnswered: a client that sends a body over the limit
// reads the 413 Status (kube-apiserver v1.37's, byte for byte) every time,
// over HTTP/1.1 (TLS and plain) and HTTP/2, instead of a connection reset
// while it is still sending: Go's client, which reads the answer while it
// sends, and a client that sends its whole request before reading (curl,
// most other clients) through a small socket buffer.
func TestOversizeBodyAnswered(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	// A 3.5 MiB ConfigMap: half a MiB over the limit.
	big := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` +
		strings.Repeat("x", 3*1024*1024+512*1024) + `"}}`)
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`
	for _, tc := range []struct {
		name  string
		url   string
		proto string
		do    func(*http.Request) (*http.Response, error)
	}{
		{"HTTP/1.1", srv.URL, "HTTP/1.1", protoClient(t, false).Do},
		{"HTTP/2", srv.URL, "HTTP/2.0", protoClient(t, true).Do},
		{"HTTP/1.1 plain", srv.Server.InsecureURL, "HTTP/1.1", protoClient(t, false).Do},
		{"HTTP/1.1 sending first", srv.URL, "HTTP/1.1", sendThenRead(t)},
		{"HTTP/1.1 plain sending first", srv.Server.InsecureURL, "HTTP/1.1", sendThenRead(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for i := range 8 {
				r, err := http.NewRequest(http.MethodPost, tc.url+"/api/v1/namespaces/"+ns+"/configmaps", bytes.NewReader(big))
				if err != nil {
					t.Fatal(err)
				}
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+srv.Token)
				resp, err := tc.do(r)
				if err != nil {
					t.Fatalf("POST %d: %v", i, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("POST %d: reading the answer: %v", i, err)
				}
				if resp.Proto != tc.proto {
					t.Fatalf("POST %d: answered over %s, want %s", i, resp.Proto, tc.proto)
				}
				response{code: resp.StatusCode, header: resp.Header, body: body}.wantStatus(t, http.StatusRequestEntityTooLarge, want)
			}
		})
	}
	wantNotStored(t, ns, "big")
}

// protoClient is a Go client of the shared server that speaks only HTTP/1.1,
// or only HTTP/2 over TLS.
func protoClient(t *testing.T, h2 bool) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(srv.ClientConfig.CAData) {
		t.Fatal("the test server has no CA to trust")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, Protocols: new(http.Protocols)}
	if h2 {
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.Protocols.SetHTTP1(true)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// sendThenRead sends a request on a new connection whose send buffer is
// small (the body cannot hide in the kernel), writing all of it before
// reading the answer, as curl and most clients other than Go's do.
func sendThenRead(t *testing.T) func(*http.Request) (*http.Response, error) {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(srv.ClientConfig.CAData)
	return func(r *http.Request) (*http.Response, error) {
		raw, err := net.Dial("tcp", r.URL.Host)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { raw.Close() })
		if err := raw.(*net.TCPConn).SetWriteBuffer(64 << 10); err != nil {
			return nil, err
		}
		conn := raw
		if r.URL.Scheme == "https" {
			conn = tls.Client(raw, &tls.Config{RootCAs: roots, ServerName: r.URL.Hostname(), NextProtos: []string{"http/1.1"}})
		}
		if err := r.Write(conn); err != nil {
			return nil, fmt.Errorf("sending: %w", err)
		}
		return http.ReadResponse(bufio.NewReader(conn), r)
	}
}
