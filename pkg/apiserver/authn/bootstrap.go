package authn

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
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
	if !isBootstrapToken(token) {
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
	case subtle.ConstantTimeCompare([]byte(secretData(secret, bootstrapapi.BootstrapTokenSecretKey)), []byte(secretValue)) != 1:
		return refuse("the token's secret does not match")
	case secretData(secret, bootstrapapi.BootstrapTokenIDKey) != id:
		return refuse("the secret's token-id does not match")
	case bootstrapTokenExpired(secret, time.Now()):
		return refuse("expired")
	case secretData(secret, bootstrapapi.BootstrapTokenUsageAuthentication) != "true":
		return refuse("not marked " + bootstrapapi.BootstrapTokenUsageAuthentication + "=true")
	}
	groups, err := bootstrapTokenGroups(secret)
	if err != nil {
		return refuse(err.Error())
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: bootstrapapi.BootstrapUserPrefix + id, Groups: groups}}, true, nil
}

// The helpers below do what k8s.io/cluster-bootstrap's token/util and
// util/secrets do for this authenticator (TestBootstrapHelpersMatchKube
// compares them), without their package-level patterns: the group
// pattern's {0,255} made each start compile a large program, --help
// included.

// isBootstrapToken reports whether token has the form <id>.<secret>:
// 6 then 16 characters of [a-z0-9].
func isBootstrapToken(token string) bool {
	id, secret, ok := strings.Cut(token, ".")
	return ok && len(id) == 6 && len(secret) == bootstrapapi.BootstrapTokenSecretBytes &&
		lowerAlnum(id) && lowerAlnum(secret)
}

func lowerAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// secretData is the string value of a Secret's key, "" when it has none.
func secretData(secret *corev1.Secret, key string) string {
	return string(secret.Data[key])
}

// bootstrapTokenExpired reports whether the Secret's expiration (RFC 3339)
// is at or before now; an expiration that does not parse has expired, a
// missing one never does.
func bootstrapTokenExpired(secret *corev1.Secret, now time.Time) bool {
	expiration := secretData(secret, bootstrapapi.BootstrapTokenExpirationKey)
	if expiration == "" {
		return false
	}
	t, err := time.Parse(time.RFC3339, expiration)
	return err != nil || t.Sub(now) <= 0
}

// bootstrapTokenGroups returns system:bootstrappers and the Secret's
// auth-extra-groups, sorted and without duplicates; an extra group must
// match bootstrapapi.BootstrapGroupPattern.
func bootstrapTokenGroups(secret *corev1.Secret) ([]string, error) {
	groups := []string{bootstrapapi.BootstrapDefaultGroup}
	if extra := secretData(secret, bootstrapapi.BootstrapTokenExtraGroupsKey); extra != "" {
		for _, group := range strings.Split(extra, ",") {
			if !isBootstrapGroup(group) {
				return nil, fmt.Errorf("bootstrap group %q is invalid (must match %s)", group, bootstrapapi.BootstrapGroupPattern)
			}
			groups = append(groups, group)
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), nil
}

// isBootstrapGroup is BootstrapGroupPattern,
// \Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z, without a regexp.
func isBootstrapGroup(name string) bool {
	rest, ok := strings.CutPrefix(name, "system:bootstrappers:")
	if !ok || len(rest) < 1 || len(rest) > 256 || !lowerAlnum(rest[len(rest)-1:]) {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c != ':' && c != '-' && !lowerAlnum(rest[i:i+1]) {
			return false
		}
	}
	return true
}
