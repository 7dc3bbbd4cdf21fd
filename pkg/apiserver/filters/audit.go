package filters

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// HeaderAuditID is the header kube names each request's audit event by.
const HeaderAuditID = "Audit-ID"

// WithAuditInit gives every request its audit state: an ID (the client's
// Audit-ID when it sent one, else a new UUID), sent back in the Audit-Id
// header as kube does, and the time it arrived; its events are counted in
// m, the server's audit metrics (nil: unregistered).
func WithAuditInit(h http.Handler, m *audit.Metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderAuditID)
		if id == "" {
			id = uuid.NewString()
		}
		w.Header().Set(HeaderAuditID, id)
		ac := audit.NewContext(id, time.Now(), m)
		h.ServeHTTP(w, r.WithContext(audit.WithContext(r.Context(), ac)))
	})
}

// receivedAt is when r arrived (now, outside WithAuditInit).
func receivedAt(r *http.Request) time.Time {
	if ac := audit.From(r.Context()); ac != nil {
		return ac.Received()
	}
	return time.Now()
}

// maxAuditedResponse bounds the response body an event keeps at
// RequestResponse: a larger body (a list of everything) is left out of
// the event rather than held in memory.
const maxAuditedResponse = 10 << 20

// WithAudit audits each request as policy says, after authentication (the
// event names the user): RequestReceived when it starts, ResponseStarted
// when a long-running response begins, ResponseComplete when it ends, or
// Panic. Events go to sink, which never blocks. A nil policy audits
// nothing.
func WithAudit(h http.Handler, policy *audit.Policy, sink audit.Sink) http.Handler {
	if policy == nil || sink == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ac := audit.From(ctx)
		attrs, err := AttributesFrom(ctx)
		if err != nil || !ac.Begin(r, attrs, policy.Evaluate(attrs)) {
			h.ServeHTTP(w, r)
			return
		}
		ac.Emit(auditv1.StageRequestReceived, sink)
		info, _ := request.InfoFrom(ctx)
		aw := &auditWriter{ResponseRecorder: ResponseRecorder{ResponseWriter: w}, ac: ac, sink: sink,
			longRunning: info != nil && info.LongRunning(), keepBody: ac.Level() == auditv1.LevelRequestResponse}
		defer func() {
			if v := recover(); v != nil {
				ac.SetResponseStatus(http.StatusInternalServerError, &metav1.Status{
					Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError,
					Message: fmt.Sprintf("APIServer panic'd: %v", v),
				})
				ac.Emit(auditv1.StagePanic, sink)
				panic(v)
			}
			aw.finish()
			ac.Emit(auditv1.StageResponseComplete, sink)
		}()
		h.ServeHTTP(aw, r)
	})
}

// auditWriter records the status line (sending ResponseStarted for a
// long-running response) and keeps what the event needs of the body: an
// error's Status, and at RequestResponse the whole JSON body.
type auditWriter struct {
	ResponseRecorder
	ac          *audit.Context
	sink        audit.Sink
	longRunning bool
	keepBody    bool

	body        bytes.Buffer
	contentType string // "" when the body is not kept (neither JSON nor protobuf)
	gzipped     bool
	tooLarge    bool
}

func (w *auditWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.started(code)
	}
	w.ResponseRecorder.WriteHeader(code)
}

func (w *auditWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.started(http.StatusOK)
	}
	if w.wantsBody() {
		if w.body.Len()+len(b) > maxAuditedResponse {
			w.tooLarge = true
			w.body = bytes.Buffer{}
		} else {
			w.body.Write(b)
		}
	}
	return w.ResponseRecorder.Write(b)
}

func (w *auditWriter) Flush() {
	if w.code == 0 {
		w.started(http.StatusOK)
	}
	w.ResponseRecorder.Flush()
}

// started records the status line of the response.
func (w *auditWriter) started(code int) {
	w.ac.SetResponseStatus(code, nil)
	ct, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	encoding := w.Header().Get("Content-Encoding")
	if (ct == runtime.ContentTypeJSON || ct == runtime.ContentTypeProtobuf) && (encoding == "" || encoding == "gzip") {
		w.contentType, w.gzipped = ct, encoding == "gzip"
	}
	if w.longRunning {
		w.ac.Emit(auditv1.StageResponseStarted, w.sink)
	}
}

// wantsBody: the body of an error (for its Status), or of any complete
// answer at RequestResponse.
func (w *auditWriter) wantsBody() bool {
	return w.contentType != "" && !w.tooLarge && !w.longRunning && (w.keepBody || w.code >= 400)
}

// finish records what the response was, once the handler returned.
func (w *auditWriter) finish() {
	if w.code == 0 {
		// The handler wrote nothing: the client went away.
		w.ac.SetResponseStatus(http.StatusOK, &metav1.Status{Status: metav1.StatusSuccess, Message: "Connection closed early"})
		if w.longRunning {
			w.ac.Emit(auditv1.StageResponseStarted, w.sink)
		}
		return
	}
	if w.body.Len() == 0 {
		return
	}
	body := w.body.Bytes()
	if w.gzipped {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return
		}
		if body, err = io.ReadAll(io.LimitReader(zr, maxAuditedResponse+1)); err != nil || len(body) > maxAuditedResponse {
			return
		}
	}
	raw, ok := audit.ResponseJSON(w.contentType, body)
	if !ok {
		return
	}
	if w.code >= 400 {
		var status metav1.Status
		if json.Unmarshal(raw, &status) == nil && status.Kind == "Status" {
			w.ac.SetResponseStatus(w.code, &status)
		}
	}
	if w.keepBody {
		w.ac.SetResponseObject(raw)
	}
}

// WithFailedAuthenticationAudit audits a request that failed
// authentication, as kube does: one ResponseStarted event saying which
// credentials were tried.
func WithFailedAuthenticationAudit(failed http.Handler, policy *audit.Policy, sink audit.Sink) http.Handler {
	if policy == nil || sink == nil {
		return failed
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ac := audit.From(r.Context())
		attrs, err := AttributesFrom(r.Context())
		if err != nil || !ac.Begin(r, attrs, policy.Evaluate(attrs)) {
			failed.ServeHTTP(w, r)
			return
		}
		ac.SetResponseStatus(0, &metav1.Status{Message: attemptedAuthMethods(r)})
		failed.ServeHTTP(&failedAuthWriter{ResponseRecorder: ResponseRecorder{ResponseWriter: w}, ac: ac, sink: sink}, r)
	})
}

// failedAuthWriter sends the event once the 401 goes out.
type failedAuthWriter struct {
	ResponseRecorder
	ac   *audit.Context
	sink audit.Sink
}

func (w *failedAuthWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.ac.SetResponseCode(code)
		w.ac.Emit(auditv1.StageResponseStarted, w.sink)
	}
	w.ResponseRecorder.WriteHeader(code)
}

func (w *failedAuthWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseRecorder.Write(b)
}

// attemptedAuthMethods is kube's message of a failed authentication.
func attemptedAuthMethods(r *http.Request) string {
	var methods []string
	if _, _, ok := r.BasicAuth(); ok {
		methods = append(methods, "basic")
	}
	if scheme, _, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "bearer") {
		methods = append(methods, "bearer")
	}
	if strings.TrimSpace(r.URL.Query().Get("access_token")) != "" {
		methods = append(methods, "access_token")
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		methods = append(methods, "x509")
	}
	if len(methods) == 0 {
		return "Authentication failed, no credentials provided"
	}
	return "Authentication failed, attempted: " + strings.Join(methods, ", ")
}
