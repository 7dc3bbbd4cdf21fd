package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// TestStorelessScope: the zero value is namespaced (pods' subresources),
// clusterScoped is not (nodes/proxy, componentstatuses), and New gives
// the kind asked.
func TestStorelessScope(t *testing.T) {
	if !(&LogREST{}).NamespaceScoped() || !(&PodProxyREST{}).NamespaceScoped() {
		t.Error("pods' subresources not namespaced")
	}
	if NewComponentStatusREST(nil).NamespaceScoped() {
		t.Error("componentstatuses namespaced")
	}
	if _, ok := (&EvictionREST{}).New().(*policyv1.Eviction); !ok {
		t.Errorf("pods/eviction's New gives %T, not an Eviction", (&EvictionREST{}).New())
	}
	if _, ok := (&LogREST{}).New().(*corev1.Pod); !ok {
		t.Errorf("pods/log's New gives %T, not a Pod", (&LogREST{}).New())
	}
}
