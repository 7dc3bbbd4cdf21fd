package filters

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// WithAuthentication puts the user auth finds in the context, and hands
// the requests it refuses to failed (Unauthorized). The credentials say
// nothing more to later steps: the Authorization header and the
// front-proxy user headers are removed. An anonymous client on HTTP/2 is
// asked to close its connection, as kube does against floods of
// unauthenticated streams.
func WithAuthentication(h http.Handler, auth authenticator.Request, failed http.Handler, apiAuds authenticator.Audiences) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(apiAuds) > 0 {
			r = r.WithContext(authenticator.WithAudiences(r.Context(), apiAuds))
		}
		resp, ok, err := auth.AuthenticateRequest(r)
		if err != nil || !ok {
			if err != nil {
				slog.Debug("apiserver: unable to authenticate the request", "path", r.URL.Path, "error", err)
			}
			failed.ServeHTTP(w, r)
			return
		}
		if len(apiAuds) > 0 && len(resp.Audiences) > 0 && len(apiAuds.Intersect(resp.Audiences)) == 0 {
			slog.Debug("apiserver: unable to match the audience", "audiences", resp.Audiences, "accepted", apiAuds)
			failed.ServeHTTP(w, r)
			return
		}
		r.Header.Del("Authorization")
		for name := range r.Header {
			if isFrontProxyHeader(name) {
				r.Header.Del(name)
			}
		}
		if r.ProtoMajor == 2 && isAnonymous(resp.User) {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), resp.User)))
	})
}

// isFrontProxyHeader matches the user headers of kube's front proxy
// (X-Remote-User, -Uid, -Group, -Extra-*), which only a request-header
// authenticator may trust.
func isFrontProxyHeader(name string) bool {
	switch name {
	case "X-Remote-User", "X-Remote-Uid", "X-Remote-Group":
		return true
	}
	return strings.HasPrefix(name, "X-Remote-Extra-")
}

func isAnonymous(u user.Info) bool {
	return u.GetName() == user.Anonymous || slices.Contains(u.GetGroups(), user.AllUnauthenticated)
}

// Unauthorized answers a request whose credentials failed: 401 with
// kube's Status.
func Unauthorized(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 2 {
		w.Header().Set("Connection", "close")
	}
	handlers.WriteError(w, r, apierrors.NewUnauthorized("Unauthorized"))
}

// WithUser gives every request the same user (the insecure port).
func WithUser(h http.Handler, u user.Info) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
	})
}
