//go:build tools

// Package conformance pins the modules that hack/conformance.sh builds
// e2e.test from: k8s.io/kubernetes/test/e2e and the packages its test
// main (e2e_test.go) imports beyond it. Nothing here is compiled; the
// build tag keeps it out of every build while `go mod tidy` still sees
// the imports.
package conformance

import (
	_ "github.com/onsi/ginkgo/v2"
	_ "go.yaml.in/yaml/v2"
	_ "k8s.io/kubernetes/test/conformance/testdata"
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/e2e/apimachinery"
	_ "k8s.io/kubernetes/test/e2e/framework"
	_ "k8s.io/kubernetes/test/fixtures"
)
