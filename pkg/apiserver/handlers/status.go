package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
)

// StatusOf returns the Kubernetes Status of err. An error that is not an
// API status is a bug: it becomes a 500 and is logged.
func StatusOf(err error) *metav1.Status {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		status := apiStatus.Status()
		if status.Code == 0 {
			status.Code = http.StatusInternalServerError
		}
		status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		return &status
	}
	// As kube: a 500 with the error's text and no reason.
	slog.Error("apiserver: an error that is not a Status", "error", err)
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}
}

// WriteError writes err as a Status in the representation the client
// accepts. When it accepts none the server writes (or only alternative
// representations, which a Status has not), the Status goes out as
// indented JSON, as kube's WriteRawJSON does.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusOf(timedOut(r, err))
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	}
	out, nerr := negotiation.NegotiateOutput(r)
	if nerr != nil {
		WriteRawJSON(w, int(status.Code), status)
		return
	}
	writeObject(w, r, out, int(status.Code), status)
}

// timedOut turns the error of a request whose deadline (the request
// timeout, or its ?timeout=) has passed into kube's 504 Timeout, whatever
// the work failed with (mostly the context's own error, which storage
// answers as a 500): kube's timeout filter answers so as soon as the
// deadline passes, before the handler's own answer.
func timedOut(r *http.Request, err error) error {
	if !errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		return err
	}
	return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %v", context.DeadlineExceeded), 0)
}

// WriteRawJSON writes v as indented JSON without a trailing newline, as
// kube writes what it cannot negotiate (and /version).
func WriteRawJSON(w http.ResponseWriter, code int, v interface{}) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", negotiation.MediaTypeJSON)
	w.WriteHeader(code)
	w.Write(data)
}

// errNotFound is kube's answer to a path that names nothing.
func errNotFound() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource", Details: &metav1.StatusDetails{},
	}}
}

// errMethodNotAllowed is kube's answer to a verb a path does not serve.
func errMethodNotAllowed() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
		Message: "the server does not allow this method on the requested resource", Details: &metav1.StatusDetails{},
	}}
}

// NotFound answers a request for a path the server does not serve.
func NotFound(w http.ResponseWriter, r *http.Request) { WriteError(w, r, errNotFound()) }

// MethodNotAllowed answers a request with a method its path does not serve.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, errMethodNotAllowed())
}

func badRequest(format string, args ...interface{}) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// serveOrError adapts a handler that either answers or returns the error
// to answer with: each of a verb's failures leaves by one exit, and
// nothing may be written before an error is returned.
func serveOrError(h func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			WriteError(w, r, err)
		}
	}
}
