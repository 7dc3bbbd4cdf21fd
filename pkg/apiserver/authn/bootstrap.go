package authn

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecret "k8s.io/cluster-bootstrap/util/secrets"
)

// SecretGetter reads a Secret (kube-system's bootstrap tokens).
type SecretGetter interface {
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// BootstrapTokens authenticate kube's bootstrap tokens
// (--enable-bootstrap-token-auth): a token "<id>.<secret>" whose Secret
// bootstrap-token-<id> in kube-system, of type
// bootstrap.kubernetes.io/token, holds that secret, has not expired and is
// marked for authentication, is user system:bootstrap:<id> in
// system:bootstrappers and the Secret's auth-extra-groups. kubeadm's TLS
// bootstrap runs on it: a joining node's token creates its CSR. Every
// failure is "not recognized" (kube logs it and lets the next
// authenticator try), never an error the client sees.
type BootstrapTokens struct{ Secrets SecretGetter }

// AuthenticateToken implements authenticator.Token.
func (b BootstrapTokens) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	if !bootstraputil.IsValidBootstrapToken(token) {
		return nil, false, nil
	}
	id, secretValue, _ := strings.Cut(token, ".")
	name := bootstrapapi.BootstrapTokenSecretPrefix + id
	secret, err := b.Secrets.GetSecret(ctx, "kube-system", name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	refuse := func(why string) (*authenticator.Response, bool, error) {
		slog.Debug("bootstrap token refused", "secret", "kube-system/"+name, "reason", why)
		return nil, false, nil
	}
	switch {
	case secret.DeletionTimestamp != nil:
		return refuse("the secret is being deleted")
	case secret.Type != bootstrapapi.SecretTypeBootstrapToken || secret.Data == nil:
		return refuse("the secret is not of type " + string(bootstrapapi.SecretTypeBootstrapToken))
	case subtle.ConstantTimeCompare([]byte(bootstrapsecret.GetData(secret, bootstrapapi.BootstrapTokenSecretKey)), []byte(secretValue)) != 1:
		return refuse("the token's secret does not match")
	case bootstrapsecret.GetData(secret, bootstrapapi.BootstrapTokenIDKey) != id:
		return refuse("the secret's token-id does not match")
	case bootstrapsecret.HasExpired(secret, time.Now()):
		return refuse("expired")
	case bootstrapsecret.GetData(secret, bootstrapapi.BootstrapTokenUsageAuthentication) != "true":
		return refuse("not marked " + bootstrapapi.BootstrapTokenUsageAuthentication + "=true")
	}
	groups, err := bootstrapsecret.GetGroups(secret)
	if err != nil {
		return refuse(err.Error())
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: bootstrapapi.BootstrapUserPrefix + id, Groups: groups}}, true, nil
}
