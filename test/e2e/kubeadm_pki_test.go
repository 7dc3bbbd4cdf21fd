package e2e

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// kubeadmPKI is a control plane's files where kubeadm puts them under
// /etc/kubernetes, in dir instead, with kubeadm's names, subjects and
// usages, so that the API servers read what a kubeadm cluster gives them:
//
//	pki/ca.{crt,key}                    the cluster CA: serves, signs client
//	                                    certificates (--client-ca-file) and the
//	                                    kubelets' (kube-controller-manager's
//	                                    --cluster-signing-*)
//	pki/apiserver.{crt,key}             the API server's serving certificate
//	pki/apiserver-kubelet-client.{crt,key}
//	pki/front-proxy-ca.{crt,key}, pki/front-proxy-client.{crt,key}
//	pki/etcd/ca.{crt,key}               etcd's own CA, and its server, peer and
//	pki/etcd/{server,peer,healthcheck-client}.{crt,key}
//	pki/apiserver-etcd-client.{crt,key} the API server's etcd client certificate
//	pki/sa.{key,pub}                    the service-account key pair
//	super-admin.conf, admin.conf, controller-manager.conf, scheduler.conf
//	encryption-config.yaml              not kubeadm's: Secrets under aescbc
//
// admin.conf's user is in kubeadm:cluster-admins, which has no rights
// until super-admin.conf's (system:masters) binds it to cluster-admin, as
// kubeadm init does.
type kubeadmPKI struct {
	dir string
	// bootstrapToken is the node bootstrap token, id.secret.
	bootstrapToken string
}

func (p *kubeadmPKI) path(name string) string { return filepath.Join(p.dir, name) }

// The control plane's users, as kubeadm names them.
const (
	clusterAdminsGroup = "kubeadm:cluster-admins"
	frontProxyClient   = "front-proxy-client"
)

// newKubeadmPKI generates every file in dir.
func newKubeadmPKI(dir string) (*kubeadmPKI, error) {
	p := &kubeadmPKI{dir: dir, bootstrapToken: randomToken(6) + "." + randomToken(16)}
	if err := os.MkdirAll(p.path("pki/etcd"), 0o700); err != nil {
		return nil, err
	}
	ca, caKey, err := writeCA(p.path("pki/ca"), "kubernetes")
	if err != nil {
		return nil, err
	}
	front, frontKey, err := writeCA(p.path("pki/front-proxy-ca"), "front-proxy-ca")
	if err != nil {
		return nil, err
	}
	etcdCA, etcdKey, err := writeCA(p.path("pki/etcd/ca"), "etcd-ca")
	if err != nil {
		return nil, err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}
	server, client := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth
	leaves := []struct {
		base   string
		cn     string
		orgs   []string
		usages []x509.ExtKeyUsage
		ca     *x509.Certificate
		caKey  crypto.Signer
	}{
		{"pki/apiserver", "kube-apiserver", nil, []x509.ExtKeyUsage{server}, ca, caKey},
		{"pki/apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{clusterAdminsGroup}, []x509.ExtKeyUsage{client}, ca, caKey},
		{"pki/front-proxy-client", frontProxyClient, nil, []x509.ExtKeyUsage{client}, front, frontKey},
		{"pki/etcd/server", "etcd-server", nil, []x509.ExtKeyUsage{server, client}, etcdCA, etcdKey},
		{"pki/etcd/peer", "etcd-peer", nil, []x509.ExtKeyUsage{server, client}, etcdCA, etcdKey},
		{"pki/etcd/healthcheck-client", "kube-etcd-healthcheck-client", nil, []x509.ExtKeyUsage{client}, etcdCA, etcdKey},
		{"pki/apiserver-etcd-client", "kube-apiserver-etcd-client", nil, []x509.ExtKeyUsage{client}, etcdCA, etcdKey},
		{"super-admin", "kubernetes-super-admin", []string{"system:masters"}, []x509.ExtKeyUsage{client}, ca, caKey},
		{"admin", "kubernetes-admin", []string{clusterAdminsGroup}, []x509.ExtKeyUsage{client}, ca, caKey},
		{"controller-manager", "system:kube-controller-manager", nil, []x509.ExtKeyUsage{client}, ca, caKey},
		{"scheduler", "system:kube-scheduler", nil, []x509.ExtKeyUsage{client}, ca, caKey},
	}
	for _, l := range leaves {
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: l.cn, Organization: l.orgs},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:  l.usages,
		}
		if l.usages[0] == server {
			tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
			tmpl.IPAddresses = append(loopback, net.ParseIP("10.96.0.1"), net.ParseIP(advertiseAddress))
		}
		if err := writeLeaf(p.path(l.base), tmpl, l.ca, l.caKey); err != nil {
			return nil, err
		}
	}
	if err := writeServiceAccountKeys(p.path("pki/sa")); err != nil {
		return nil, err
	}
	return p, p.writeEncryptionConfig()
}

// writeEncryptionConfig writes kube's EncryptionConfiguration that keeps
// Secrets under aescbc (reading what was stored in the clear as well).
func (p *kubeadmPKI) writeEncryptionConfig() error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: %s
  - identity: {}
`, base64.StdEncoding.EncodeToString(key))
	return os.WriteFile(p.path("encryption-config.yaml"), []byte(config), 0o600)
}

// writeKubeconfigs writes the kubeconfig of each client certificate user
// (base.conf, certificate in base.crt) for the server at url.
func (p *kubeadmPKI) writeKubeconfigs(url string) error {
	for _, base := range []string{"super-admin", "admin", "controller-manager", "scheduler"} {
		config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubernetes
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: %s@kubernetes
  context: {cluster: kubernetes, user: %s}
current-context: %s@kubernetes
`, url, p.path("pki/ca.crt"), base, p.path(base+".crt"), p.path(base+".key"), base, base, base)
		if err := os.WriteFile(p.path(base+".conf"), []byte(config), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// randomToken is n characters of [a-z0-9], a bootstrap token's alphabet.
func randomToken(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
