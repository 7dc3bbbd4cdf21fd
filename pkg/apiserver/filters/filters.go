// Package filters are the HTTP middleware around every request:
// authentication, panic recovery, warnings, and the read-only paths that
// need no token.
package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// TokenAuthenticator checks bearer tokens.
type TokenAuthenticator interface {
	AuthenticateToken(token string) (user.Info, bool)
}

// publicPaths need no credentials, as kube's system:public-info-viewer
// allows them to anyone: probes and version.
var publicPaths = []string{"/healthz", "/livez", "/readyz", "/version"}

// WithAuthentication lets through requests with a valid bearer token, and
// answers the others 401 with a Status.
func WithAuthentication(h http.Handler, auth TokenAuthenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token, ok := bearerToken(r); ok {
			if u, ok := auth.AuthenticateToken(token); ok {
				// The token says nothing more to the handlers.
				r.Header.Del("Authorization")
				h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
				return
			}
		} else if isPublic(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		handlers.WriteError(w, r, apierrors.NewUnauthorized("Unauthorized"))
	})
}

// HeaderAuditID is the header kube names each request's audit event by.
const HeaderAuditID = "Audit-ID"

// WithAuditID gives every response an Audit-Id header, as kube does: the
// client's own Audit-ID when it sent one, else a new UUID. (There is no
// audit log; clients and proxies still correlate by it.)
func WithAuditID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderAuditID)
		if id == "" {
			id = uuid.NewString()
		}
		w.Header().Set(HeaderAuditID, id)
		h.ServeHTTP(w, r)
	})
}

// WithUser gives every request the same user (the insecure port).
func WithUser(h http.Handler, u user.Info) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
	})
}

func bearerToken(r *http.Request) (string, bool) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func isPublic(path string) bool {
	for _, p := range publicPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// WithPanicRecovery turns a panic in a handler into a 500 Status (when
// nothing was written yet) and a log line with the stack; the server keeps
// serving.
func WithPanicRecovery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recordingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's own way to abort a response
			}
			slog.Error("apiserver: panic serving a request", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !rw.wroteHeader {
				handlers.WriteError(w, r, apierrors.NewInternalError(fmt.Errorf("the server panicked serving the request")))
			}
		}()
		h.ServeHTTP(rw, r)
	})
}

// WithWarnings collects the warnings of a request and sends them as
// Warning headers (kube's format: 299 - "text") before the status line.
func WithWarnings(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		warnings := &request.Warnings{}
		ww := &warningWriter{recordingWriter: recordingWriter{ResponseWriter: w}, warnings: warnings}
		h.ServeHTTP(ww, r.WithContext(request.WithWarnings(r.Context(), warnings)))
	})
}

// WithCacheControl marks every response "Cache-Control: no-cache, private"
// unless its handler says otherwise (aggregated discovery is public), as
// kube's filter does: API responses are per user and change at any time.
func WithCacheControl(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache, private")
		h.ServeHTTP(w, r)
	})
}

// recordingWriter remembers whether the status line went out, and passes
// Flush through (watches need it).
type recordingWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

func (w *recordingWriter) WriteHeader(code int) {
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		w.wroteHeader = true
		f.Flush()
	}
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type warningWriter struct {
	recordingWriter
	warnings *request.Warnings
}

func (w *warningWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		for _, text := range w.warnings.List() {
			w.Header().Add("Warning", fmt.Sprintf("299 - %q", text))
		}
	}
	w.recordingWriter.WriteHeader(code)
}

func (w *warningWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.recordingWriter.Write(b)
}

func (w *warningWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.recordingWriter.Flush()
}
