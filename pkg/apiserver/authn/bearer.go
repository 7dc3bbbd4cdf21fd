package authn

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// errInvalidToken is kube's answer to a bearer token no authenticator
// knows.
var errInvalidToken = errors.New("invalid bearer token")

// bearerToken authenticates the token of an "Authorization: Bearer"
// header, as kube's bearertoken authenticator: no such header is not
// recognized; a token no token authenticator knows is an error (401).
type bearerToken struct{ tokens authenticator.Token }

func (b bearerToken) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	if auth == "" {
		return nil, false, nil
	}
	parts := strings.SplitN(auth, " ", 3)
	if len(parts) < 2 || strings.ToLower(parts[0]) != "bearer" {
		return nil, false, nil
	}
	token := parts[1]
	if token == "" {
		if len(parts) == 3 {
			request.AddWarning(r.Context(), "the provided Authorization header contains extra space before the bearer token, and is ignored")
		}
		return nil, false, nil
	}
	resp, ok, err := b.tokens.AuthenticateToken(r.Context(), token)
	if !ok && err == nil {
		err = errInvalidToken
	}
	return resp, ok, err
}

// tokenUnion asks each token authenticator in turn; the first that knows
// the token wins, and errors are gathered when none does.
type tokenUnion []authenticator.Token

func (u tokenUnion) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	return firstRecognized(u, func(a authenticator.Token) (*authenticator.Response, bool, error) {
		return a.AuthenticateToken(ctx, token)
	})
}
