package filters

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// WithImpersonation lets a user act as another (Impersonate-User,
// Impersonate-Group, Impersonate-Uid, Impersonate-Extra-KEY headers) when
// a allows it, as kube 1.37's constrained impersonation decides
// (impersonate:MODE and impersonate-on:MODE:VERB for nodes, service
// accounts and other users, then the legacy impersonate verb). The
// impersonated user replaces the requestor for every later step; the
// audit event keeps both. Refusals are kube's 403 (400 for groups, uid or
// extras without a user).
func WithImpersonation(h http.Handler, a authorizer.Authorizer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wanted, err := impersonationHeaders(r.Header)
		if err != nil {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			handlers.WriteError(w, r, err)
			return
		}
		if wanted == nil {
			h.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		attrs, err := AttributesFrom(ctx)
		if err != nil {
			internalError(w, r, err)
			return
		}
		if attrs.GetUser() == nil {
			internalError(w, r, errors.New("no User found in the context"))
			return
		}
		impersonated, constraint, err := impersonate(ctx, a, wanted, attrs)
		if err != nil {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			handlers.WriteError(w, r, err)
			return
		}
		audit.From(ctx).LogImpersonatedUser(impersonated, constraint)
		h.ServeHTTP(w, r.WithContext(request.WithUser(ctx, impersonated)))
	})
}

// impersonationHeaders reads (and removes) the impersonation headers: nil
// when there are none. Groups, a uid or extras without a user name are
// a 400, in kube's words.
func impersonationHeaders(headers http.Header) (*user.DefaultInfo, error) {
	wanted := &user.DefaultInfo{
		Name:   headers.Get(authenticationv1.ImpersonateUserHeader),
		UID:    headers.Get(authenticationv1.ImpersonateUIDHeader),
		Groups: headers[authenticationv1.ImpersonateGroupHeader],
	}
	hasExtra := false
	for name, values := range headers {
		if !strings.HasPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			continue
		}
		hasExtra = true
		if len(values) == 0 {
			continue
		}
		key := strings.ToLower(name[len(authenticationv1.ImpersonateUserExtraHeaderPrefix):])
		if unescaped, err := url.PathUnescape(key); err == nil {
			key = unescaped
		}
		if wanted.Extra == nil {
			wanted.Extra = map[string][]string{}
		}
		wanted.Extra[key] = append(wanted.Extra[key], values...)
	}
	if wanted.Name == "" {
		if wanted.UID != "" || len(wanted.Groups) > 0 || hasExtra {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("requested %#v without impersonating a user name", wanted))
		}
		return nil, nil
	}
	wanted.Groups = slices.Clone(wanted.Groups)
	headers.Del(authenticationv1.ImpersonateUserHeader)
	headers.Del(authenticationv1.ImpersonateUIDHeader)
	headers.Del(authenticationv1.ImpersonateGroupHeader)
	for name := range headers {
		if strings.HasPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			headers.Del(name)
		}
	}
	return wanted, nil
}
