// Package controllers holds the few controllers miniapiserver runs in its
// own process: where kube relies on kube-controller-manager, because users
// of a lone API server expect their effect (a deleted namespace goes away),
// and those kube-apiserver runs itself (the flow control configuration,
// the default ServiceCIDR, the legacy token tracking ConfigMap).
// They sit above the registry, beside the HTTP layer: cmd -> controllers ->
// registry. They call registry verbs directly, never HTTP.
package controllers
