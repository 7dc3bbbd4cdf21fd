package app

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/kubelet"
)

// KubeletOptions are the flags of how the server reaches kubelets (for
// pods/log, exec, attach, portforward and nodes/proxy), with
// kube-apiserver's names and defaults.
type KubeletOptions struct {
	PreferredAddressTypes []string
	Timeout               time.Duration
	ClientCertificate     string
	ClientKey             string
	CertificateAuthority  string
	// Port is kube's deprecated --kubelet-port: the port of kubelets
	// whose Node publishes none.
	Port uint
}

func defaultKubeletOptions() KubeletOptions {
	return KubeletOptions{
		PreferredAddressTypes: kubelet.DefaultPreferredAddressTypes(),
		Timeout:               kubelet.DefaultTimeout,
		Port:                  kubelet.DefaultPort,
	}
}

func (o *KubeletOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.PreferredAddressTypes, "kubelet-preferred-address-types", o.PreferredAddressTypes,
		"List of the preferred NodeAddressTypes to use for kubelet connections.")
	fs.DurationVar(&o.Timeout, "kubelet-timeout", o.Timeout,
		"Timeout for kubelet operations: how long dialling a kubelet may take.")
	fs.StringVar(&o.ClientCertificate, "kubelet-client-certificate", o.ClientCertificate,
		"Path to a client cert file for TLS (presented to kubelets; read again for every new connection).")
	fs.StringVar(&o.ClientKey, "kubelet-client-key", o.ClientKey, "Path to a client key file for TLS.")
	fs.StringVar(&o.CertificateAuthority, "kubelet-certificate-authority", o.CertificateAuthority,
		"Path to a cert file for the certificate authority. Without it, as in kube, kubelets' serving certificates are not verified.")
	fs.UintVar(&o.Port, "kubelet-port", o.Port, "DEPRECATED: kubelet port (of the kubelets whose Node publishes none).")
	_ = fs.MarkDeprecated("kubelet-port", "kubelet-port is deprecated and will be removed.")
}

func (o *KubeletOptions) validate() error {
	known := map[string]bool{}
	for _, t := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP,
		corev1.NodeExternalDNS, corev1.NodeExternalIP} {
		known[string(t)] = true
	}
	for _, t := range o.PreferredAddressTypes {
		if !known[t] {
			return fmt.Errorf("--kubelet-preferred-address-types: %q is not a node address type", t)
		}
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--kubelet-timeout: must be positive")
	}
	if o.Port == 0 || o.Port > 65535 {
		return fmt.Errorf("--kubelet-port: %d is not a port", o.Port)
	}
	if (o.ClientCertificate == "") != (o.ClientKey == "") {
		return fmt.Errorf("--kubelet-client-certificate and --kubelet-client-key: set both or neither")
	}
	return nil
}

// config is the kubelet client's configuration.
func (o *KubeletOptions) config() kubelet.Config {
	return kubelet.Config{
		PreferredAddressTypes: o.PreferredAddressTypes, Timeout: o.Timeout, Port: int(o.Port),
		CertFile: o.ClientCertificate, KeyFile: o.ClientKey, CAFile: o.CertificateAuthority,
	}
}
