package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// execConnecter is pods/exec's storage: it records the options it
// connects with.
type execConnecter struct{ got *corev1.PodExecOptions }

func (c *execConnecter) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.PodExecOptions{}, false, ""
}
func (c *execConnecter) ConnectMethods() []string { return []string{"GET", "POST"} }
func (c *execConnecter) Connect(_ context.Context, _ string, opts runtime.Object, _ rest.Responder) (http.Handler, error) {
	c.got = opts.(*corev1.PodExecOptions)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }), nil
}

// connectChain records the steps of admission, the attributes they were
// given, and sets the container of the options at its mutating step.
type connectChain struct {
	steps []string
	attrs []Attributes
	deny  bool
}

func (c *connectChain) Validate(context.Context, Attributes, runtime.Object) error { return nil }
func (c *connectChain) AdmitConnect(_ context.Context, a Attributes, obj runtime.Object) error {
	c.steps, c.attrs = append(c.steps, "admit"), append(c.attrs, a)
	obj.(*corev1.PodExecOptions).Container = "patched"
	return nil
}
func (c *connectChain) ValidateConnect(_ context.Context, a Attributes, obj runtime.Object) error {
	c.steps, c.attrs = append(c.steps, "validate "+obj.(*corev1.PodExecOptions).Container), append(c.attrs, a)
	if c.deny {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errDenied)
	}
	return nil
}

var errDenied = errors.New("no")

// TestConnectAdmission: a connect runs the chain's mutating step, then its
// validating one, with CONNECT attributes naming the endpoint, as kube's
// connect handler does; the options the mutating step changed are what
// the storage connects with; a refusal stops the request; a dry run is
// refused before admission.
func TestConnectAdmission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, query string
		deny        bool
		wantSteps   []string
		wantCode    int
	}{
		{"admitted", "command=ls&stdout=true", false, []string{"admit", "validate patched"}, http.StatusNoContent},
		{"refused", "command=ls", true, []string{"admit", "validate patched"}, http.StatusForbidden},
		{"dry run", "command=ls&dryRun=All", false, nil, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chain, storage := &connectChain{deny: tc.deny}, &execConnecter{}
			s := &Scope{Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: "exec",
				Kind: corev1.SchemeGroupVersion.WithKind("PodExecOptions"), Admission: chain}
			w := httptest.NewRecorder()
			s.Connect(storage)(w, httptest.NewRequest("POST", "/api/v1/namespaces/ns/pods/p/exec?"+tc.query, nil))
			if w.Code != tc.wantCode {
				t.Fatalf("code: got %d, want %d (%s)", w.Code, tc.wantCode, w.Body)
			}
			if !slices.Equal(chain.steps, tc.wantSteps) {
				t.Errorf("steps: got %q, want %q", chain.steps, tc.wantSteps)
			}
			for _, a := range chain.attrs {
				if a.Operation != Connect || a.Subresource != "exec" || a.Kind.Kind != "PodExecOptions" || a.Old != nil || a.Options != nil || a.DryRun {
					t.Errorf("attributes: %+v", a)
				}
			}
			admitted := tc.wantCode == http.StatusNoContent
			if admitted != (storage.got != nil) {
				t.Fatalf("storage called: %v", storage.got != nil)
			}
			if admitted && (storage.got.Container != "patched" || !slices.Equal(storage.got.Command, []string{"ls"})) {
				t.Errorf("options connected with: %+v", storage.got)
			}
			if tc.name == "dry run" && !strings.Contains(w.Body.String(), "dryRun is not supported") {
				t.Errorf("dry run: %s", w.Body)
			}
		})
	}
}
