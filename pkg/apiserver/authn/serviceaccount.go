package authn

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gopkg.in/go-jose/go-jose.v2/jwt"
	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	apiserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// ObjectGetter reads the objects a service account token depends on. A
// missing object is an error (any error invalidates the token).
type ObjectGetter interface {
	GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
}

// validator checks the claims of a token whose signature and issuer are
// good, against the objects it names, and returns its service account.
type validator[T any] func(ctx context.Context, token string, public *jwt.Claims, private *T) (*apiserviceaccount.ServiceAccountInfo, error)

// jwtTokens authenticates the service account JWTs of some issuers, as
// kube's JWTTokenAuthenticator: a token of another issuer is not
// recognized; one of these issuers must verify with a key, name an
// audience the request accepts, and pass the validator.
type jwtTokens[T any] struct {
	issuers      map[string]bool
	keys         []serviceaccount.PublicKey
	implicitAuds authenticator.Audiences
	validate     validator[T]
	// verified keeps the claims of tokens whose signature was checked.
	verified verifiedCache[verifiedClaims[T]]
}

type verifiedClaims[T any] struct {
	public  *jwt.Claims
	private *T
}

// tokenCacheTTL bounds how long a verified token's claims are remembered
// (never past its expiry).
const tokenCacheTTL = 10 * time.Minute

// NewServiceAccountTokens authenticates the bound tokens of issuers (the
// TokenRequest API's): they are valid until they expire, and while the
// service account and the pod, secret or node they are bound to exist
// with the UIDs the token names.
func NewServiceAccountTokens(issuers []string, keys []serviceaccount.PublicKey, implicitAuds authenticator.Audiences, getter ObjectGetter) authenticator.Token {
	return newJWTTokens(issuers, keys, implicitAuds, boundValidator(getter))
}

// NewLegacyServiceAccountTokens authenticates the tokens of
// kubernetes.io/service-account-token secrets. With lookup (kube's
// --service-account-lookup) the secret must still hold the token and the
// service account still exist with its UID.
func NewLegacyServiceAccountTokens(keys []serviceaccount.PublicKey, implicitAuds authenticator.Audiences, getter ObjectGetter, lookup bool) authenticator.Token {
	return newJWTTokens([]string{serviceaccount.LegacyIssuer}, keys, implicitAuds, legacyValidator(getter, lookup))
}

func newJWTTokens[T any](issuers []string, keys []serviceaccount.PublicKey, implicitAuds authenticator.Audiences, v validator[T]) *jwtTokens[T] {
	j := &jwtTokens[T]{issuers: map[string]bool{}, keys: keys, implicitAuds: implicitAuds, validate: v}
	for _, iss := range issuers {
		j.issuers[iss] = true
	}
	return j
}

// AuthenticateToken implements authenticator.Token.
func (j *jwtTokens[T]) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	public, private, recognized, err := j.verify(token)
	if !recognized || err != nil {
		return nil, false, err
	}
	if !j.issuers[public.Issuer] {
		return nil, false, fmt.Errorf("token issuer %q is invalid", public.Issuer)
	}
	tokenAuds := authenticator.Audiences(public.Audience)
	if len(tokenAuds) == 0 {
		request.AddAuditAnnotation(ctx, "authentication.k8s.io/legacy-token", public.Subject)
		tokenAuds = j.implicitAuds
	}
	requested, ok := authenticator.AudiencesFrom(ctx)
	if !ok {
		requested = j.implicitAuds
	}
	auds := tokenAuds.Intersect(requested)
	if len(auds) == 0 && len(j.implicitAuds) != 0 {
		return nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, requested)
	}
	sa, err := j.validate(ctx, token, public, private)
	if err != nil {
		return nil, false, err
	}
	return &authenticator.Response{User: sa.UserInfo(), Audiences: auds}, true, nil
}

// verify checks the token's signature with the key it names (or every
// key) and reads its claims; a token that is not a JWT of one of the
// issuers is not recognized.
func (j *jwtTokens[T]) verify(token string) (*jwt.Claims, *T, bool, error) {
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	if c, ok := j.verified.get(key, now); ok {
		return c.public, c.private, true, nil
	}
	if !j.hasIssuer(token) {
		return nil, nil, false, nil
	}
	tok, err := jwt.ParseSigned(token)
	if err != nil {
		return nil, nil, false, nil
	}
	kid := ""
	for _, h := range tok.Headers {
		if h.KeyID != "" {
			kid = h.KeyID
			break
		}
	}
	public, private := &jwt.Claims{}, new(T)
	var errs []error
	for _, k := range j.keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if err := tok.Claims(k.PublicKey, public, private); err != nil {
			errs = append(errs, err)
			continue
		}
		until := now.Add(tokenCacheTTL)
		if public.Expiry != nil && public.Expiry.Time().Before(until) {
			until = public.Expiry.Time()
		}
		j.verified.put(key, verifiedClaims[T]{public, private}, until)
		return public, private, true, nil
	}
	if len(errs) == 0 {
		return nil, nil, true, errors.New("invalid signature, no keys found")
	}
	return nil, nil, true, utilerrors.NewAggregate(errs)
}

// hasIssuer reads the issuer of a JWT without verifying it, to leave
// tokens of other issuers to other authenticators.
func (j *jwtTokens[T]) hasIssuer(token string) bool {
	if strings.HasPrefix(strings.TrimSpace(token), "{") {
		return false
	}
	parts := strings.SplitN(token, ".", 4)
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims struct {
		Issuer string `json:"iss"`
	}
	return json.Unmarshal(payload, &claims) == nil && j.issuers[claims.Issuer]
}

// legacyValidator is kube's check of a secret's token.
func legacyValidator(getter ObjectGetter, lookup bool) validator[serviceaccount.LegacyPrivateClaims] {
	return func(ctx context.Context, token string, public *jwt.Claims, private *serviceaccount.LegacyPrivateClaims) (*apiserviceaccount.ServiceAccountInfo, error) {
		switch {
		case public.Subject == "":
			return nil, errors.New("sub claim is missing")
		case private.Namespace == "":
			return nil, errors.New("namespace claim is missing")
		case private.SecretName == "":
			return nil, errors.New("secretName claim is missing")
		case private.ServiceAccountName == "":
			return nil, errors.New("serviceAccountName claim is missing")
		case private.ServiceAccountUID == "":
			return nil, errors.New("serviceAccountUID claim is missing")
		}
		ns, name, err := apiserviceaccount.SplitUsername(public.Subject)
		if err != nil || ns != private.Namespace || name != private.ServiceAccountName {
			return nil, errors.New("sub claim is invalid")
		}
		if lookup {
			if err := lookupLegacy(ctx, getter, token, private); err != nil {
				return nil, err
			}
		}
		return &apiserviceaccount.ServiceAccountInfo{Namespace: private.Namespace, Name: private.ServiceAccountName, UID: private.ServiceAccountUID}, nil
	}
}

// invalidSinceLabel marks a secret whose token kube stopped accepting.
const invalidSinceLabel = "kubernetes.io/legacy-token-invalid-since"

func lookupLegacy(ctx context.Context, getter ObjectGetter, token string, c *serviceaccount.LegacyPrivateClaims) error {
	secret, err := getter.GetSecret(ctx, c.Namespace, c.SecretName)
	if err != nil || secret.DeletionTimestamp != nil {
		return errors.New("Token has been invalidated")
	}
	if subtle.ConstantTimeCompare(secret.Data[corev1.ServiceAccountTokenKey], []byte(token)) == 0 {
		return errors.New("Token does not match server's copy")
	}
	sa, err := getter.GetServiceAccount(ctx, c.Namespace, c.ServiceAccountName)
	if err != nil {
		return err
	}
	if sa.DeletionTimestamp != nil {
		return fmt.Errorf("ServiceAccount %s/%s has been deleted", c.Namespace, c.ServiceAccountName)
	}
	if string(sa.UID) != c.ServiceAccountUID {
		return fmt.Errorf("ServiceAccount UID (%s) does not match claim (%s)", sa.UID, c.ServiceAccountUID)
	}
	if secret.Labels[invalidSinceLabel] != "" {
		request.AddAuditAnnotation(ctx, "authentication.k8s.io/legacy-token-invalidated", secret.Name+"/"+secret.Namespace)
		return fmt.Errorf("the token in secret %s/%s for service account %s/%s has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '%s' label from the secret to temporarily allow use of this token",
			c.Namespace, c.SecretName, c.Namespace, c.ServiceAccountName, invalidSinceLabel)
	}
	for _, ref := range sa.Secrets {
		if ref.Name == secret.Name {
			request.AddWarning(ctx, "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.")
			request.AddAuditAnnotation(ctx, "authentication.k8s.io/legacy-token-autogenerated-secret", secret.Name)
			return nil
		}
	}
	request.AddAuditAnnotation(ctx, "authentication.k8s.io/legacy-token-manual-secret", secret.Name)
	return nil
}
