package filters

import (
	"bufio"
	"net"
	"net/http"
)

// ResponseRecorder remembers the status code a handler wrote and passes
// Flush through (watches need it). It is the one wrapper of the response
// the filters share: others that must act on the status line (warnings,
// audit) embed it.
type ResponseRecorder struct {
	http.ResponseWriter
	code int
}

// NewResponseRecorder wraps w.
func NewResponseRecorder(w http.ResponseWriter) *ResponseRecorder {
	return &ResponseRecorder{ResponseWriter: w}
}

// Code is the status code written, 0 while nothing was.
func (w *ResponseRecorder) Code() int { return w.code }

// WriteHeader implements http.ResponseWriter.
func (w *ResponseRecorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *ResponseRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *ResponseRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.code == 0 {
			w.code = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *ResponseRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack implements http.Hijacker: an upgraded request (exec,
// port-forward) takes the connection over, and what it writes there
// (101 Switching Protocols, or the backend's refusal) is not seen here.
func (w *ResponseRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.code == 0 {
		w.code = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}
