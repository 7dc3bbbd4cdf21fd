// Package quota measures what objects cost against a ResourceQuota, with
// kube's rules: one Evaluator per resource (pods, services and claims
// have their own, every other resource is counted as count/<resource>),
// and CheckRequest, the check kube's ResourceQuota admission runs on a
// write against the quotas of its namespace.
//
// The evaluators implement k8s.io/apiserver's quota.Evaluator, so that
// kube's resource-list helpers and the shape of its plugin and controller
// carry over; they are written here because kube's live in
// k8s.io/kubernetes, which this module does not import. It sits beside
// the registry: the admission plugin and the resourcequota controller use
// it, it imports only API types (and podspec for a pod's QoS class).
package quota
