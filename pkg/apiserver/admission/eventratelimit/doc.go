// Package eventratelimit is kube's EventRateLimit admission plugin: a
// step of the admission chain (pkg/apiserver/handlers.Admission) that
// refuses writes of core Events beyond token-bucket rate limits, server
// wide or per namespace, user or event source and object. It sits beside
// the other plugins of pkg/apiserver/admission and imports only the
// registry's request context and k8s.io libraries.
package eventratelimit
