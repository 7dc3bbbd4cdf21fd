package authn

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/asn1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// ClientCert authenticates the client certificate of a TLS request against
// a CA bundle (kube's --client-ca-file): the certificate's common name is
// the user, its organizations the groups, its X.509 UID attribute (if
// any) the uid. A request without a certificate is not recognized; one
// whose certificate does not verify fails (401), it never falls back to
// anonymous.
type ClientCert struct {
	roots *x509.CertPool
	// verified keeps the users of certificates verified recently.
	verified verifiedCache[*authenticator.Response]
}

// certCacheTTL bounds how long a verified certificate is remembered.
const certCacheTTL = 5 * time.Minute

var _ authenticator.Request = (*ClientCert)(nil)

// NewClientCert returns the authenticator of certificates signed by roots.
func NewClientCert(roots *x509.CertPool) *ClientCert { return &ClientCert{roots: roots} }

// AuthenticateRequest implements authenticator.Request.
func (c *ClientCert) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	key := sha256.Sum256(leaf.Raw)
	now := time.Now()
	if resp, ok := c.verified.get(key, now); ok {
		return resp, true, nil
	}
	chains, err := verifyClientCert(c.roots, r.TLS.PeerCertificates)
	if err != nil {
		return nil, false, err
	}
	resp, ok, err := firstRecognized(chains, func(chain []*x509.Certificate) (*authenticator.Response, bool, error) {
		return commonNameUser(chain[0])
	})
	if ok {
		until := now.Add(certCacheTTL)
		for _, cert := range chains[0] {
			if cert.NotAfter.Before(until) {
				until = cert.NotAfter
			}
		}
		c.verified.put(key, resp, until)
	}
	return resp, ok, err
}

// verifyClientCert verifies a client's certificate chain (the leaf
// first, then intermediates) against roots, for client authentication.
func verifyClientCert(roots *x509.CertPool, certs []*x509.Certificate) ([][]*x509.Certificate, error) {
	opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, cert := range certs[1:] {
			opts.Intermediates.AddCert(cert)
		}
	}
	chains, err := certs[0].Verify(opts)
	if err != nil {
		return nil, fmt.Errorf("verifying certificate %s failed: %w", certificateIdentifier(certs[0]), err)
	}
	return chains, nil
}

// commonNameUser is kube's CommonNameUserConversion.
func commonNameUser(cert *x509.Certificate) (*authenticator.Response, bool, error) {
	if cert.Subject.CommonName == "" {
		return nil, false, nil
	}
	uid, err := certUID(cert)
	if err != nil {
		return nil, false, err
	}
	fp := sha256.Sum256(cert.Raw)
	return &authenticator.Response{User: &user.DefaultInfo{
		Name:   cert.Subject.CommonName,
		UID:    uid,
		Groups: cert.Subject.Organization,
		Extra:  map[string][]string{user.CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(fp[:])}},
	}}, true, nil
}

var uidOID = asn1.X509UID()

// certUID reads the one X.509 UID attribute of the subject, if any.
func certUID(cert *x509.Certificate) (string, error) {
	var uids []string
	for _, name := range cert.Subject.Names {
		if !name.Type.Equal(uidOID) {
			continue
		}
		uid, ok := name.Value.(string)
		if !ok {
			return "", errors.New("unable to parse UID into a string")
		}
		uids = append(uids, uid)
	}
	switch {
	case len(uids) == 0:
		return "", nil
	case len(uids) != 1:
		return "", fmt.Errorf("expected 1 UID, but found multiple: %v", uids)
	case uids[0] == "":
		return "", errors.New("UID cannot be an empty string")
	}
	return uids[0], nil
}

// certificateIdentifier names a certificate in errors as kube does.
func certificateIdentifier(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%d, SKID=%s, AKID=%s", c.SerialNumber, colonHex(c.SubjectKeyId), colonHex(c.AuthorityKeyId))
}

func colonHex(d []byte) string {
	h := strings.ToUpper(hex.EncodeToString(d))
	var sb strings.Builder
	for i, r := range h {
		sb.WriteRune(r)
		if i%2 == 1 && i != len(h)-1 {
			sb.WriteRune(':')
		}
	}
	return sb.String()
}
