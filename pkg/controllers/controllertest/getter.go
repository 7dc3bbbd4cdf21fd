// Package controllertest gives the controllers' tests real storage: the
// registry's options over an etcd of the test's own. Tests only.
package controllertest

import (
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// NewGetter starts an etcd for t (stopped when t ends) and returns the
// options of storage on it, without watch cache, each resource under
// /registry/<group>/<resource>: registrytest's, which the registry's
// own tests use.
func NewGetter(t testing.TB) generic.RESTOptionsGetter {
	t.Helper()
	return registrytest.NewGetter(t)
}
