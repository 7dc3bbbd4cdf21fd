package aggregator

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// tlsInputs are what an APIService says of the TLS connection to its
// server.
type tlsInputs struct {
	serverName string
	caBundle   []byte
	insecure   bool
}

// tlsInputsOf: the server must present a certificate for
// SERVICE.NAMESPACE.svc, as kube's aggregator asks, whatever address the
// connection goes to.
func tlsInputsOf(s *apiregistrationv1.APIService) tlsInputs {
	return tlsInputs{
		serverName: s.Spec.Service.Name + "." + s.Spec.Service.Namespace + ".svc",
		caBundle:   s.Spec.CABundle,
		insecure:   s.Spec.InsecureSkipTLSVerify,
	}
}

func (t tlsInputs) equal(o tlsInputs) bool {
	return t.serverName == o.serverName && t.insecure == o.insecure && bytes.Equal(t.caBundle, o.caBundle)
}

// errBadCABundle is kube's (client-go's) error for a caBundle without a
// certificate.
var errBadCABundle = errors.New("unable to load root certificates: unable to parse bytes as PEM block")

// newTransport is the transport to one extension API server: its
// certificate verified against the caBundle (the system's roots when
// empty) unless insecureSkipTLSVerify, this server's front-proxy client
// certificate presented, HTTP/2 when the server offers it.
func newTransport(in tlsInputs, clientCert *tls.Certificate) (*http.Transport, error) {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12, ServerName: in.serverName,
		InsecureSkipVerify: in.insecure, //nolint:gosec // the APIService asks for it, as in kube
	}
	if len(in.caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(in.caBundle) {
			return nil, errBadCABundle
		}
		cfg.RootCAs = pool
	}
	if clientCert != nil {
		cert := clientCert
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
	}), nil
}
