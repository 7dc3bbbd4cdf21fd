// Package filters are the HTTP middleware around every request, each a
// small func(http.Handler) http.Handler, chained by the apiserver package
// in kube-apiserver's order: the audit ID, panic recovery, the request
// info (what the request addresses, read once for every later step),
// cache control, warnings, the request deadline, authentication, the
// audit log, impersonation, the in-flight limits, authorization.
//
// Layers: part of pkg/apiserver; it reads and writes the request context
// through the registry's request package (request.Info, the user, the
// warnings, the audit annotations).
package filters
