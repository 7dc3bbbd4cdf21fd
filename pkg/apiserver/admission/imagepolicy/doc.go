// Package imagepolicy is kube's ImagePolicyWebhook admission plugin: a
// step of the admission chain (pkg/apiserver/handlers.Admission) that
// asks an external backend, named by a kubeconfig file, whether a pod's
// images may run. It sits beside the other plugins of
// pkg/apiserver/admission, and imports only the registry's request
// context and k8s.io libraries.
package imagepolicy
