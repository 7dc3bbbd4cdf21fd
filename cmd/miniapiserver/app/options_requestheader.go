package app

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authn"
)

// RequestHeaderOptions are kube-apiserver's --requestheader-* flags: the
// authenticating proxies (the aggregation layer's front proxy, above all)
// whose headers name the user.
type RequestHeaderOptions struct {
	ClientCAFile        string
	AllowedNames        []string
	UsernameHeaders     []string
	UIDHeaders          []string
	GroupHeaders        []string
	ExtraHeaderPrefixes []string
}

// ProxyClientOptions are the client certificate this server presents when
// it proxies a request to an extension API server (kube's
// --proxy-client-cert-file and --proxy-client-key-file).
type ProxyClientOptions struct {
	CertFile, KeyFile string
	// EnableAggregatorRouting routes proxied requests to the endpoints of
	// an APIService's service rather than its cluster IP (kube's flag;
	// on by default here, where nothing routes cluster IPs).
	EnableAggregatorRouting bool
	// RejectForwardingRedirects is kube's
	// --aggregator-reject-forwarding-redirect: an extension server's
	// redirect is answered 502, not passed on.
	RejectForwardingRedirects bool
}

func (o *RequestHeaderOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "requestheader-client-ca-file", o.ClientCAFile,
		"Root certificates (PEM) that verify the client certificates of authenticating proxies: a request that presents one is from the user its --requestheader-username-headers name. Published in kube-system/extension-apiserver-authentication.")
	fs.StringSliceVar(&o.AllowedNames, "requestheader-allowed-names", o.AllowedNames,
		"Common names a proxy's client certificate may have (empty: any that --requestheader-client-ca-file verifies).")
	fs.StringSliceVar(&o.UsernameHeaders, "requestheader-username-headers", o.UsernameHeaders,
		"Request headers to read the user name from, the first with a value wins. X-Remote-User is common.")
	fs.StringSliceVar(&o.UIDHeaders, "requestheader-uid-headers", o.UIDHeaders,
		"Request headers to read the user's UID from, the first with a value wins. X-Remote-Uid is suggested.")
	fs.StringSliceVar(&o.GroupHeaders, "requestheader-group-headers", o.GroupHeaders,
		"Request headers whose every value is a group of the user. X-Remote-Group is suggested.")
	fs.StringSliceVar(&o.ExtraHeaderPrefixes, "requestheader-extra-headers-prefix", o.ExtraHeaderPrefixes,
		"Prefixes of request headers that carry the user's extra information (PREFIX<key>). X-Remote-Extra- is suggested.")
}

func (o *RequestHeaderOptions) validate() error {
	for flag, values := range map[string][]string{
		"--requestheader-username-headers": o.UsernameHeaders, "--requestheader-uid-headers": o.UIDHeaders,
		"--requestheader-group-headers": o.GroupHeaders, "--requestheader-extra-headers-prefix": o.ExtraHeaderPrefixes,
		"--requestheader-allowed-names": o.AllowedNames,
	} {
		for _, v := range values {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("%s: empty value in %q", flag, values)
			}
		}
	}
	if o.ClientCAFile == "" && (len(o.AllowedNames)+len(o.UsernameHeaders)+len(o.UIDHeaders)+len(o.GroupHeaders)+len(o.ExtraHeaderPrefixes) > 0) {
		return errors.New("--requestheader-*: headers are trusted only from proxies --requestheader-client-ca-file verifies, and it is not set")
	}
	return nil
}

// build returns the authenticator's configuration and the CA bundle
// (PEM); nil without --requestheader-client-ca-file.
func (o *RequestHeaderOptions) build() (*authn.RequestHeaderConfig, []byte, error) {
	if o.ClientCAFile == "" {
		return nil, nil, nil
	}
	data, err := os.ReadFile(o.ClientCAFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, nil, fmt.Errorf("--requestheader-client-ca-file: %s holds no PEM certificate", o.ClientCAFile)
	}
	return &authn.RequestHeaderConfig{
		ClientCAs: pool, AllowedNames: o.AllowedNames, UsernameHeaders: o.UsernameHeaders, UIDHeaders: o.UIDHeaders,
		GroupHeaders: o.GroupHeaders, ExtraHeaderPrefixes: o.ExtraHeaderPrefixes,
	}, data, nil
}

// configMapData is what kube-apiserver publishes of the request headers
// in extension-apiserver-authentication: the bundle, and each list as a
// JSON array (the uid headers only when set).
func (o *RequestHeaderOptions) configMapData(caPEM []byte) map[string]string {
	if len(caPEM) == 0 {
		return nil
	}
	list := func(v []string) string {
		if v == nil {
			v = []string{}
		}
		data, _ := json.Marshal(v)
		return string(data)
	}
	data := map[string]string{
		"requestheader-client-ca-file":       string(caPEM),
		"requestheader-allowed-names":        list(o.AllowedNames),
		"requestheader-username-headers":     list(o.UsernameHeaders),
		"requestheader-group-headers":        list(o.GroupHeaders),
		"requestheader-extra-headers-prefix": list(o.ExtraHeaderPrefixes),
	}
	if len(o.UIDHeaders) > 0 {
		data["requestheader-uid-headers"] = list(o.UIDHeaders)
	}
	return data
}

func (o *ProxyClientOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CertFile, "proxy-client-cert-file", o.CertFile,
		"Client certificate this server presents to the extension API servers it proxies requests to (the aggregation layer); they verify it with --requestheader-client-ca-file, published in kube-system/extension-apiserver-authentication.")
	fs.StringVar(&o.KeyFile, "proxy-client-key-file", o.KeyFile, "Private key of --proxy-client-cert-file.")
	fs.BoolVar(&o.EnableAggregatorRouting, "enable-aggregator-routing", o.EnableAggregatorRouting,
		"Proxy the requests of an APIService to a ready endpoint of its service (its EndpointSlices) rather than to its cluster IP. "+
			"On by default, unlike kube-apiserver: this server runs without kube-proxy, so a cluster IP is reachable only where something else routes it.")
	fs.BoolVar(&o.RejectForwardingRedirects, "aggregator-reject-forwarding-redirect", o.RejectForwardingRedirects,
		"Aggregator reject forwarding redirect response back to client: an extension API server's redirect is answered 502.")
}

// load reads the pair; nil when not set.
func (o *ProxyClientOptions) load() (*tls.Certificate, error) {
	switch {
	case o.CertFile == "" && o.KeyFile == "":
		return nil, nil
	case o.CertFile == "" || o.KeyFile == "":
		return nil, errors.New("--proxy-client-cert-file and --proxy-client-key-file go together")
	}
	pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--proxy-client-cert-file, --proxy-client-key-file: %w", err)
	}
	return &pair, nil
}
