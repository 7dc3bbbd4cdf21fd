// Package admissionpolicy enforces MutatingAdmissionPolicies and
// ValidatingAdmissionPolicies with their bindings, read from this
// server's storage, as kube-apiserver's admission plugins of those names
// do. Expressions compile and run in k8s.io/apiserver's admission CEL
// library (compiler, condition evaluators, match conditions, the request,
// namespaceObject and authorizer variables) and its mutation patchers
// (JSON patch, apply configuration); requests are matched with its rule
// and object-selector predicates. The policy source (watches of our
// storage), the resource mapping, params, namespaces and the dispatch are
// this package's: kube's plugin framework needs informers and its
// generic server.
package admissionpolicy
