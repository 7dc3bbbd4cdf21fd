package admission

import (
	"context"
	"errors"
	"log/slog"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// AlwaysAdmit is kube's deprecated plugin of that name: it admits every
// request, which is what an empty chain does; it exists so that a
// command line naming it starts.
type AlwaysAdmit struct{}

// NewAlwaysAdmit logs kube's deprecation warning.
func NewAlwaysAdmit() AlwaysAdmit {
	slog.Warn("AlwaysAdmit admission controller is deprecated. Please remove this controller from your configuration files and scripts.")
	return AlwaysAdmit{}
}

// Validate implements handlers.Admission.
func (AlwaysAdmit) Validate(context.Context, handlers.Attributes, runtime.Object) error { return nil }

// AlwaysDeny is kube's deprecated plugin of that name: it refuses every
// write and every connect (exec, attach, port-forward, proxy) with a
// Forbidden naming the object.
type AlwaysDeny struct{}

// NewAlwaysDeny logs kube's deprecation warning.
func NewAlwaysDeny() AlwaysDeny {
	slog.Warn("AlwaysDeny admission controller is deprecated. Please remove this controller from your configuration files and scripts.")
	return AlwaysDeny{}
}

var errDenyAll = errors.New("admission control is denying all modifications")

// Admit implements handlers.MutatingAdmission: kube's plugin refuses at
// the mutating step already, before any webhook is called.
func (AlwaysDeny) Admit(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	return a.Forbidden(obj, errDenyAll)
}

// Validate implements handlers.Admission.
func (AlwaysDeny) Validate(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	return a.Forbidden(obj, errDenyAll)
}

// ValidateConnect implements handlers.ConnectAdmission.
func (AlwaysDeny) ValidateConnect(_ context.Context, a handlers.Attributes, _ runtime.Object) error {
	return forbidden(a, errDenyAll)
}

// AdmitConnect implements handlers.MutatingConnectAdmission: as for
// writes, kube's plugin refuses a connect at the mutating step, before
// any mutating webhook is called.
func (AlwaysDeny) AdmitConnect(_ context.Context, a handlers.Attributes, _ runtime.Object) error {
	return forbidden(a, errDenyAll)
}
