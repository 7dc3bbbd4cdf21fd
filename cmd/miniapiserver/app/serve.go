package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
)

// serve is the last part of Start: it serves the handler on the secure
// port (and the insecure one, when set), then writes the admin
// kubeconfig.
func (s *Server) serve(o *Options, creds *credentials, h *builtHandler) error {
	tlsConfig := &tls.Config{
		Certificates: []tls.Certificate{creds.servingCert}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12,
		// Client certificates are asked for, not required: the
		// authenticator verifies them, other requests use tokens.
		ClientAuth: tls.RequestClientCert, ClientCAs: creds.clientCA.Pool,
	}
	o.Kube.Serving.apply(tlsConfig)
	s.serveOn(h.secureLn, h.api.SecureHandler(), tlsConfig, o.serveOptions())
	if o.InsecurePort != 0 {
		insecureLn, err := net.Listen("tcp", net.JoinHostPort(o.InsecureBindAddr, strconv.Itoa(o.InsecurePort)))
		if err != nil {
			return fmt.Errorf("--insecure-port: %w", err)
		}
		s.InsecureURL = "http://" + clientAddress(insecureLn.Addr().(*net.TCPAddr))
		s.serveOn(insecureLn, h.api.InsecureHandler(), nil, o.serveOptions())
	}
	admin := adminCredentials{CertPEM: creds.adminCert, KeyPEM: creds.adminKey, Token: creds.adminToken}
	if admin.CertPEM != nil || admin.Token != "" {
		s.KubeconfigPath = filepath.Join(o.DataDir, "kubeconfig")
		if err := writeKubeconfig(s.KubeconfigPath, s.SecureURL, creds.caPEM, admin); err != nil {
			return fmt.Errorf("--data-dir: writing the kubeconfig: %w", err)
		}
	}
	return nil
}

// serveOn serves h on ln, as one of the server's loops, until the loops
// end; a serving error stops the server.
func (s *Server) serveOn(ln net.Listener, h http.Handler, tlsConfig *tls.Config, opts apiserver.ServeOptions) {
	s.loops.Go(func(ctx context.Context) {
		if err := apiserver.Serve(ctx, ln, h, tlsConfig, opts); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errs <- fmt.Errorf("serving on %s: %w", ln.Addr(), err)
			s.loops.cancel()
		}
	})
}

// clientAddress is the address clients use for a listener: a loopback
// address when it listens on every interface.
func clientAddress(addr *net.TCPAddr) string {
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return (&url.URL{Host: net.JoinHostPort(host, strconv.Itoa(addr.Port))}).Host
}
