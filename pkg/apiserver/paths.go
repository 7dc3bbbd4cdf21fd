package apiserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// trimmedPath returns p without its trailing slashes when kube serves it
// so: kube's API paths (/api..., /apis/..., /version) are go-restful
// routes, or reach them through the aggregator's proxy prefixes
// ("/apis/GROUP/VERSION/", "/api/"), and go-restful matches a path with
// its trailing slashes trimmed (go-restful v3 TrimRightSlashEnabled, its
// default): /api/v1/namespaces/ lists namespaces there. /apis itself is
// not one of them (the aggregator serves "/apis/" apart: see
// installDiscovery), nor are the paths of kube's NonGoRestfulMux
// (/healthz, /openapi/v2, /metrics...), which match exactly.
func trimmedPath(p string) (string, bool) {
	trimmed := strings.TrimRight(p, "/")
	if trimmed == p {
		return "", false
	}
	switch {
	case trimmed == "/api", trimmed == "/version":
	case strings.HasPrefix(trimmed, "/api/"), strings.HasPrefix(trimmed, "/apis/"):
	default:
		return "", false
	}
	return trimmed, true
}

// serveTrimmed routes r again, from the top, without its trailing
// slashes, when kube serves its path so (trimmedPath); it reports false,
// having written nothing, otherwise. The filters have already seen the
// request as it came (audit records its URI with the slashes, as kube's).
func (s *Server) serveTrimmed(w http.ResponseWriter, r *http.Request) bool {
	trimmed, ok := trimmedPath(r.URL.Path)
	if !ok {
		return false
	}
	u := *r.URL
	u.Path = trimmed
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	// A fresh route context: the failed match is no parent of this one.
	r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, chi.NewRouteContext()))
	r.URL = &u
	s.routes.ServeHTTP(w, r)
	return true
}
