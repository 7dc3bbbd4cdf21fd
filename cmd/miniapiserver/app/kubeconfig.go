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

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authn"
)

// AdminUser is the user of the generated admin token.
var AdminUser = user.DefaultInfo{Name: "admin", UID: "admin", Groups: []string{"system:masters", "system:authenticated"}}

// authenticator returns the token authenticator and, without
// --token-auth-file, the admin token generated in dataDir (kept there and
// reused on restart).
func authenticator(o *Options) (*authn.TokenAuthenticator, string, error) {
	if o.TokenAuthFile != "" {
		a, err := authn.LoadTokenFile(o.TokenAuthFile)
		if err != nil {
			return nil, "", fmt.Errorf("--token-auth-file: %w", err)
		}
		return a, "", nil
	}
	file := filepath.Join(o.DataDir, "admin-token")
	data, err := os.ReadFile(file)
	token := strings.TrimSpace(string(data))
	if err != nil || token == "" {
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			return nil, "", err
		}
		token = hex.EncodeToString(buf)
		if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
			return nil, "", fmt.Errorf("--data-dir: writing the admin token: %w", err)
		}
	}
	admin := AdminUser
	return authn.NewTokenAuthenticator(map[string]user.Info{token: &admin}), token, nil
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
		Token string `json:"token"`
	} `json:"user"`
}

type namedContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster string `json:"cluster"`
		User    string `json:"user"`
	} `json:"context"`
}

// writeKubeconfig writes a kubeconfig that reaches server with token,
// trusting caPEM (or skipping verification when the CA is unknown).
func writeKubeconfig(path, server, token string, caPEM []byte) error {
	var c namedCluster
	c.Name = "miniapiserver"
	c.Cluster.Server = server
	if caPEM != nil {
		c.Cluster.CertificateAuthorityData = base64.StdEncoding.EncodeToString(caPEM)
	} else {
		c.Cluster.InsecureSkipTLSVerify = true
	}
	var u namedUser
	u.Name = "admin"
	u.User.Token = token
	var ctx namedContext
	ctx.Name = "miniapiserver"
	ctx.Context.Cluster, ctx.Context.User = c.Name, u.Name
	data, err := yaml.Marshal(kubeconfig{
		APIVersion: "v1", Kind: "Config",
		Clusters: []namedCluster{c}, Users: []namedUser{u}, Contexts: []namedContext{ctx},
		CurrentContext: ctx.Name,
	})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
