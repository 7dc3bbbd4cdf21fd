// Package validation holds the checks of kube's pkg/apis/core/validation
// that many resources share, with kube's messages: object metadata (with
// kube's finalizer rule), names, ports and protocols, resource names and
// quantities, IP families, the replica counters of workload statuses, and
// the way kube prints a value of its internal types in a message.
//
// It sits in the registry, below the API groups that use it (core, apps,
// the PodSpec library in core/podspec, and the groups that validate
// object metadata as kube's core does: certificates, admissionregistration,
// flowcontrol, storagemigration), and imports nothing of ours.
// Import it as corevalidation: apimachinery's util/validation is usually
// imported beside it.
package validation
