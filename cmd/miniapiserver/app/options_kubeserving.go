package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// ServingOptions are kube's flags of the secure port beyond its address
// and certificate: the TLS versions, cipher suites and key exchanges
// offered, and the socket options of its listener.
type ServingOptions struct {
	// TLSMinVersion is --tls-min-version (VersionTLS10 ... VersionTLS13;
	// "": TLS 1.2, kube's default).
	TLSMinVersion string
	// TLSCipherSuites is --tls-cipher-suites, by Go's names (nil: Go's
	// default suites). They apply to TLS 1.2 and older: Go does not let
	// TLS 1.3's be chosen.
	TLSCipherSuites []string
	// TLSCurvePreferences is --tls-curve-preferences, Go's CurveIDs.
	TLSCurvePreferences []int32
	// PermitPortSharing and PermitAddressSharing set SO_REUSEPORT and
	// SO_REUSEADDR on the secure listener.
	PermitPortSharing, PermitAddressSharing bool
}

func (o *ServingOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.TLSMinVersion, "tls-min-version", o.TLSMinVersion,
		"Minimum TLS version supported. Possible values: "+strings.Join(slices.Sorted(func(yield func(string) bool) {
			for k := range tlsVersions {
				if !yield(k) {
					return
				}
			}
		}), ", "))
	fs.StringSliceVar(&o.TLSCipherSuites, "tls-cipher-suites", o.TLSCipherSuites,
		"Comma-separated list of cipher suites for the server, by Go's crypto/tls names (TLS 1.2 and older; TLS 1.3's are Go's). If omitted, the default Go cipher suites will be used.")
	fs.Int32SliceVar(&o.TLSCurvePreferences, "tls-curve-preferences", o.TLSCurvePreferences,
		"Comma-separated list of numeric Go crypto/tls CurveID values, as the allowed key exchange mechanisms for the server. If omitted, the default Go curves will be used.")
	fs.BoolVar(&o.PermitPortSharing, "permit-port-sharing", o.PermitPortSharing,
		"If true, SO_REUSEPORT will be used when binding the port, which allows more than one instance to bind on the same address and port. [default=false]")
	fs.BoolVar(&o.PermitAddressSharing, "permit-address-sharing", o.PermitAddressSharing,
		"If true, SO_REUSEADDR will be used when binding the port. This allows binding to wildcard IPs like 0.0.0.0 and specific IPs in parallel, and it avoids waiting for the kernel to release sockets in TIME_WAIT state. [default=false]")
}

var tlsVersions = map[string]uint16{
	"VersionTLS10": tls.VersionTLS10, "VersionTLS11": tls.VersionTLS11,
	"VersionTLS12": tls.VersionTLS12, "VersionTLS13": tls.VersionTLS13,
}

// cipherSuiteIDs are the cipher suites by name: Go's, secure and
// insecure, and the names without _SHA256 that kube still takes for the
// two CHACHA20 suites.
func cipherSuiteIDs() map[string]uint16 {
	ids := map[string]uint16{
		"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		ids[s.Name] = s.ID
	}
	return ids
}

// apply sets the flags' TLS settings on cfg; validate has checked them.
func (o *ServingOptions) apply(cfg *tls.Config) {
	if v, ok := tlsVersions[o.TLSMinVersion]; ok {
		cfg.MinVersion = v
	}
	ids := cipherSuiteIDs()
	for _, name := range o.TLSCipherSuites {
		cfg.CipherSuites = append(cfg.CipherSuites, ids[name])
	}
	for _, c := range o.TLSCurvePreferences {
		cfg.CurvePreferences = append(cfg.CurvePreferences, tls.CurveID(c))
	}
}

func (o *ServingOptions) validate() error {
	if _, ok := tlsVersions[o.TLSMinVersion]; !ok && o.TLSMinVersion != "" {
		return fmt.Errorf("--tls-min-version: unknown tls version %q", o.TLSMinVersion)
	}
	ids := cipherSuiteIDs()
	for _, name := range o.TLSCipherSuites {
		if _, ok := ids[name]; !ok {
			return fmt.Errorf("--tls-cipher-suites: Cipher suite %s not supported or doesn't exist", name)
		}
	}
	for _, c := range o.TLSCurvePreferences {
		// Go names every curve it implements: an unnamed one it would
		// silently never offer.
		if id := tls.CurveID(c); c <= 0 || c > 0xffff || strings.HasPrefix(id.String(), "CurveID(") {
			return fmt.Errorf("--tls-curve-preferences: %d is not a key exchange this server's Go (crypto/tls) supports", c)
		}
	}
	return nil
}

// listen opens the secure port's listener with the socket options asked.
// Go sets SO_REUSEADDR on every listener anyway; the option is set again
// so that the flag's meaning does not rest on that.
func (o *ServingOptions) listen(addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var opErr error
		err := c.Control(func(fd uintptr) {
			if o.PermitAddressSharing {
				opErr = setReuseAddr(fd)
			}
			if opErr == nil && o.PermitPortSharing {
				opErr = setReusePort(fd)
			}
		})
		if err != nil {
			return err
		}
		return opErr
	}}
	return lc.Listen(context.Background(), "tcp", addr)
}
