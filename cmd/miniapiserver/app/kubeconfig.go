package app

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/yaml"
)

// AdminTokenUser is the user of the generated admin token.
var AdminTokenUser = user.DefaultInfo{Name: "admin", UID: "admin", Groups: []string{user.SystemPrivilegedGroup}}

// adminToken returns, without --token-auth-file, the admin token kept in
// dataDir (generated the first time).
func adminToken(o *Options) (string, error) {
	if o.TokenAuthFile != "" {
		return "", nil
	}
	file := filepath.Join(o.DataDir, "admin-token")
	data, err := os.ReadFile(file)
	token := strings.TrimSpace(string(data))
	if err == nil && token != "" {
		return token, nil
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	token = hex.EncodeToString(buf)
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("--data-dir: writing the admin token: %w", err)
	}
	return token, nil
}

// kubeconfig is the subset of kubectl's config file written for the admin.
type kubeconfig struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Clusters       []namedCluster `json:"clusters"`
	Users          []namedUser    `json:"users"`
	Contexts       []namedContext `json:"contexts"`
	CurrentContext string         `json:"current-context"`
}

type namedCluster struct {
	Name    string `json:"name"`
	Cluster struct {
		Server                   string `json:"server"`
		CertificateAuthorityData string `json:"certificate-authority-data,omitempty"`
		InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	} `json:"cluster"`
}

type namedUser struct {
	Name string `json:"name"`
	User struct {
		ClientCertificateData string `json:"client-certificate-data,omitempty"`
		ClientKeyData         string `json:"client-key-data,omitempty"`
		Token                 string `json:"token,omitempty"`
	} `json:"user"`
}

type namedContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster string `json:"cluster"`
		User    string `json:"user"`
	} `json:"context"`
}

// adminCredentials are the ways into the admin kubeconfig: a client
// certificate, a token, or both.
type adminCredentials struct {
	CertPEM, KeyPEM []byte
	Token           string
}

// writeKubeconfig writes a kubeconfig that reaches server as the admin,
// trusting caPEM (or skipping verification when the CA is unknown): its
// current context uses the client certificate when there is one; the
// token has a context of its own ("miniapiserver-token").
func writeKubeconfig(path, server string, caPEM []byte, creds adminCredentials) error {
	var c namedCluster
	c.Name = "miniapiserver"
	c.Cluster.Server = server
	if caPEM != nil {
		c.Cluster.CertificateAuthorityData = base64.StdEncoding.EncodeToString(caPEM)
	} else {
		c.Cluster.InsecureSkipTLSVerify = true
	}
	cfg := kubeconfig{APIVersion: "v1", Kind: "Config", Clusters: []namedCluster{c}}
	add := func(name string, u namedUser) {
		u.Name = name
		var ctx namedContext
		ctx.Name = "miniapiserver"
		if len(cfg.Contexts) > 0 {
			ctx.Name = "miniapiserver-token"
		}
		ctx.Context.Cluster, ctx.Context.User = c.Name, name
		cfg.Users, cfg.Contexts = append(cfg.Users, u), append(cfg.Contexts, ctx)
	}
	if creds.CertPEM != nil {
		var u namedUser
		u.User.ClientCertificateData = base64.StdEncoding.EncodeToString(creds.CertPEM)
		u.User.ClientKeyData = base64.StdEncoding.EncodeToString(creds.KeyPEM)
		add(AdminUserName, u)
	}
	if creds.Token != "" {
		var u namedUser
		u.User.Token = creds.Token
		add("admin-token", u)
	}
	cfg.CurrentContext = cfg.Contexts[0].Name
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
