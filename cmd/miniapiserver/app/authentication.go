package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authn"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// credentials are what the server authenticates with, read from the
// flags or generated in the data dir for the one-command run: its serving
// certificate, the client CA, the admin's certificate and token, the
// service account keys.
type credentials struct {
	servingCert tls.Certificate
	// caPEM is the certificate clients trust (nil with --tls-cert-file);
	// it is published in every namespace (kube-root-ca.crt).
	caPEM      []byte
	clientCA   *ClientCA
	adminToken string
	adminCert  []byte
	adminKey   []byte
	signer     *serviceaccount.Signer
	publicKeys []serviceaccount.PublicKey
	// requestHeader trusts authenticating proxies (nil: none), whose CA
	// bundle is requestHeaderCA.
	requestHeader   *authn.RequestHeaderConfig
	requestHeaderCA []byte
	// proxyClient is presented to the extension API servers requests are
	// proxied to (nil: none given).
	proxyClient *tls.Certificate
}

// loadCredentials is the first part of Start: it reads or generates the
// credentials.
func loadCredentials(o *Options) (*credentials, error) {
	c := &credentials{}
	var err error
	if c.servingCert, c.caPEM, err = servingCert(o); err != nil {
		return nil, err
	}
	if c.clientCA, err = loadClientCA(o); err != nil {
		return nil, err
	}
	if c.clientCA.CanSign() {
		if c.adminCert, c.adminKey, err = adminCert(o.DataDir, c.clientCA); err != nil {
			return nil, err
		}
	}
	if c.adminToken, err = adminToken(o); err != nil {
		return nil, err
	}
	if c.signer, c.publicKeys, err = serviceAccountKeys(o); err != nil {
		return nil, err
	}
	if c.requestHeader, c.requestHeaderCA, err = o.Auth.RequestHeader.build(); err != nil {
		return nil, err
	}
	if c.proxyClient, err = o.Auth.ProxyClient.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// extensionAuthData is what kube-system/extension-apiserver-authentication
// says of how this server authenticates: the client CA and the request
// headers it trusts.
func (c *credentials) extensionAuthData(o *Options) map[string]string {
	data := map[string]string{"client-ca-file": string(c.clientCA.PEM)}
	maps.Copy(data, o.Auth.RequestHeader.configMapData(c.requestHeaderCA))
	return data
}

// serviceAccountKeys returns the signer of new tokens (the first issuer,
// --service-account-signing-key-file or a key kept in dataDir) and the
// keys that verify tokens (--service-account-key-file, and the signer's).
func serviceAccountKeys(o *Options) (*serviceaccount.Signer, []serviceaccount.PublicKey, error) {
	path := o.Auth.ServiceAccountSigningKeyFile
	flag := "--service-account-signing-key-file"
	if path == "" {
		path, flag = filepath.Join(o.DataDir, "pki", "sa.key"), "--data-dir"
		if _, err := os.Stat(path); os.IsNotExist(err) {
			pemData, err := serviceaccount.GenerateKey()
			if err != nil {
				return nil, nil, err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, nil, err
			}
			if err := os.WriteFile(path, pemData, 0o600); err != nil {
				return nil, nil, fmt.Errorf("--data-dir: writing the service account key: %w", err)
			}
		}
	}
	key, err := serviceaccount.ReadPrivateKey(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", flag, err)
	}
	signer, err := serviceaccount.NewSigner(o.Auth.issuers()[0], key)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", flag, err)
	}
	var keys []serviceaccount.PublicKey
	for _, f := range o.Auth.ServiceAccountKeyFiles {
		k, err := serviceaccount.ReadPublicKeys(f)
		if err != nil {
			return nil, nil, fmt.Errorf("--service-account-key-file: %w", err)
		}
		keys = append(keys, k...)
	}
	id, err := serviceaccount.KeyID(key.Public())
	if err != nil {
		return nil, nil, err
	}
	if !containsKey(keys, id) {
		keys = append(keys, serviceaccount.PublicKey{KeyID: id, PublicKey: key.Public()})
	}
	return signer, keys, nil
}

func containsKey(keys []serviceaccount.PublicKey, id string) bool {
	for _, k := range keys {
		if k.KeyID == id {
			return true
		}
	}
	return false
}

// tokenIssuer configures the TokenRequest API.
func (c *credentials) tokenIssuer(o *Options) *core.TokenIssuer {
	return &core.TokenIssuer{
		Signer:           c.signer,
		APIAudiences:     o.Auth.apiAudiences(),
		MaxExpiration:    o.Auth.ServiceAccountMaxTokenExpiration,
		ExtendExpiration: o.Auth.ServiceAccountExtendTokenExpiration,
	}
}

// authenticator is the chain of the secure port: client certificates,
// static tokens (the file, or the generated admin token), service account
// tokens (legacy, then bound), bootstrap tokens, the JWTs of OpenID
// issuers, anonymous (as --anonymous-auth, or --authentication-config
// says).
func (c *credentials) authenticator(o *Options, objects authn.ObjectGetter, jwt *jwtAuthentication) (authenticator.Request, error) {
	cfg := authn.Config{
		RequestHeader: c.requestHeader,
		ClientCAs:     c.clientCA.Pool,
		APIAudiences:  o.Auth.apiAudiences(),
		Anonymous:     o.Auth.AnonymousAuth,
	}
	if a := jwt.anonymous; a != nil {
		cfg.Anonymous = a.Enabled
		for _, c := range a.Conditions {
			cfg.AnonymousPaths = append(cfg.AnonymousPaths, c.Path)
		}
	}
	if jwt.jwts != nil {
		cfg.JWT = jwt.jwts
	}
	switch {
	case o.TokenAuthFile != "":
		tf, err := authn.LoadTokenFile(o.TokenAuthFile)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		cfg.TokenFile = tf
	case c.adminToken != "":
		admin := AdminTokenUser
		cfg.TokenFile = authn.NewTokenFile(map[string]*user.DefaultInfo{c.adminToken: &admin})
	}
	cfg.ServiceAccounts = []authenticator.Token{
		authn.NewLegacyServiceAccountTokens(c.publicKeys, cfg.APIAudiences, objects, o.Auth.ServiceAccountLookup),
		authn.NewServiceAccountTokens(o.Auth.issuers(), c.publicKeys, cfg.APIAudiences, objects),
	}
	if o.Auth.EnableBootstrapTokenAuth {
		cfg.BootstrapTokens = authn.BootstrapTokens{Secrets: objects}
	}
	return authn.New(cfg), nil
}

// security is what the filters decide with: who a request is from, what
// it may do, what is recorded of it.
type security struct {
	authenticator authenticator.Request
	authorizer    authorizer.Authorizer
	auditPolicy   *audit.Policy
	auditLog      *audit.LogBackend // nil: no audit
	// auditMetrics are the server's audit metrics, which the log and
	// the requests' audit state record in.
	auditMetrics *audit.Metrics
	// authnReloader reads --authentication-config again (nil: no file);
	// started with the server's other goroutines.
	authnReloader *authenticationReloader
}

// buildSecurity builds the authenticator (and hands it to the TokenReview
// storage; its JWT authenticators fetch their issuers' keys until ctx
// ends) and the audit log (stopped at cleanup); the authorizer is built
// before the groups (newAuthorization), whose reviews ask it.
func (s *Server) buildSecurity(ctx context.Context, o *Options, creds *credentials, coreStorage core.LegacyRESTStorage, reviews *lateAuthenticator, authorizer authorizer.Authorizer) (*security, error) {
	var sec security
	var err error
	objects := registryObjects{
		serviceAccounts: coreStorage.ServiceAccounts, pods: coreStorage.Pods,
		secrets: coreStorage.Secrets, nodes: coreStorage.Nodes,
	}
	jwt, err := newJWTAuthentication(ctx, &o.Auth)
	if err != nil {
		return nil, err
	}
	if jwt.jwts != nil {
		// The issuers' keys are fetched until ctx ends: a start that
		// fails before the server runs ends them too.
		s.cleanup = append(s.cleanup, s.loops.cancel)
	}
	sec.authnReloader = jwt.reloader
	if sec.authenticator, err = creds.authenticator(o, objects, jwt); err != nil {
		return nil, err
	}
	reviews.Request = sec.authenticator
	sec.authorizer = authorizer
	sec.auditMetrics = audit.NewMetrics(s.metrics)
	if sec.auditPolicy, sec.auditLog, err = o.Audit.build(sec.auditMetrics); err != nil {
		return nil, err
	}
	if sec.auditLog != nil {
		s.cleanup = append(s.cleanup, sec.auditLog.Shutdown)
	}
	return &sec, nil
}

// discovery is the OpenID documents of the issuer, for a server at
// secureURL; nil (as kube: none served) when the issuer is not an https
// URL.
func (c *credentials) discovery(o *Options, secureURL string) *serviceaccount.Discovery {
	d, err := serviceaccount.NewDiscovery(o.Auth.issuers()[0], o.Auth.ServiceAccountJWKSURI, externalAddress(secureURL), c.publicKeys)
	if err != nil {
		slog.Info("service account issuer discovery is off", "reason", err)
		return nil
	}
	return d
}

// registryObjects reads the objects tokens depend on from the registry:
// from the watch cache first, then from etcd when the cache does not have
// the object (yet), as kube's token getter reads its informers first.
type registryObjects struct {
	serviceAccounts, pods, secrets, nodes rest.Getter
}

func getObject[T any](ctx context.Context, g rest.Getter, namespace, name string) (T, error) {
	var zero T
	ctx = request.WithNamespace(ctx, namespace)
	obj, err := g.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		obj, err = g.Get(ctx, name, &metav1.GetOptions{})
	}
	if err != nil {
		return zero, err
	}
	return obj.(T), nil
}

func (r registryObjects) GetServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return getObject[*corev1.ServiceAccount](ctx, r.serviceAccounts, ns, name)
}

func (r registryObjects) GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return getObject[*corev1.Pod](ctx, r.pods, ns, name)
}

func (r registryObjects) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return getObject[*corev1.Secret](ctx, r.secrets, ns, name)
}

func (r registryObjects) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return getObject[*corev1.Node](ctx, r.nodes, "", name)
}

// lateAuthenticator forwards to the chain once it is built: the
// TokenReview storage needs the chain, and the chain needs the storage of
// service accounts. Set before the server serves.
type lateAuthenticator struct{ authenticator.Request }

// externalAddress is host:port of the secure URL.
func externalAddress(secureURL string) string { return strings.TrimPrefix(secureURL, "https://") }

// inFlightQueueLength is how many requests of one user may wait for a
// place (kube's default queue length of a priority level).
const inFlightQueueLength = 50

// auditSink is the log backend as the server's sink (nil: no audit).
func auditSink(b *audit.LogBackend) audit.Sink {
	if b == nil {
		return nil
	}
	return b
}

// discoveryHandlers serve the service account issuer's OpenID documents,
// as kube: JSON, cacheable for an hour.
func discoveryHandlers(d *serviceaccount.Discovery) map[string]http.Handler {
	if d == nil {
		return nil
	}
	serve := func(contentType string, body []byte) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("Cache-Control", "public, max-age=3600")
			w.Write(body)
		})
	}
	return map[string]http.Handler{
		serviceaccount.OpenIDConfigPath: serve("application/json", d.Config),
		serviceaccount.JWKSPath:         serve("application/jwk-set+json", d.JWKS),
	}
}
