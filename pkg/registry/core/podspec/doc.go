// Package podspec is the PodSpec library: the defaults, validation and
// warnings of pods and of the pod templates that workloads embed, as
// kube's pkg/apis/core/validation, pkg/apis/core/v1 defaults and
// pkg/api/pod do them, plus a pod's QoS class and AppArmor fields and the
// CONTAINERS and IMAGES table columns of workloads.
//
// Every group whose objects hold a PodSpec uses it: core (pods,
// podtemplates, replicationcontrollers), apps, batch. The pods resource
// itself (its strategy, table, binding, admission) stays in core. It sits
// below those groups in the registry, over core/validation.
package podspec
