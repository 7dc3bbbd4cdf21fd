package quota

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// pod is a pod with one container c of the given resources (JSON).
func pod(name, resources string) string {
	return `{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"c","image":"i","resources":` + resources + `}]}}`
}

// TestPodCompute: a quota on cpu and memory wants every container to
// state them, and charges requests and limits.
func TestPodCompute(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "pods=2,requests.cpu=1,limits.cpu=2,requests.memory=1Gi,count/pods=5"),
		"pods=0,requests.cpu=0,limits.cpu=0,requests.memory=0,count/pods=0")
	path := "/api/v1/namespaces/" + ns + "/pods"
	do(t, http.MethodPost, path, pod("none", `{}`)).wantForbidden(t, "pods", "none",
		"failed quota: q: must specify limits.cpu for: c; requests.cpu for: c; requests.memory for: c")
	do(t, http.MethodPost, path, pod("p1", `{"requests":{"cpu":"500m","memory":"256Mi"},"limits":{"cpu":"1"}}`)).
		wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, pod("p2", `{"requests":{"cpu":"600m","memory":"256Mi"},"limits":{"cpu":"1"}}`)).
		wantForbidden(t, "pods", "p2", "exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1")
	do(t, http.MethodPost, path, pod("p3", `{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":"1500m"}}`)).
		wantForbidden(t, "pods", "p3", "exceeded quota: q, requested: limits.cpu=1500m,requests.memory=1Gi, used: limits.cpu=1,requests.memory=256Mi, limited: limits.cpu=2,requests.memory=1Gi")
	do(t, http.MethodPost, path, pod("p4", `{"requests":{"cpu":"500m","memory":"256Mi"},"limits":{"cpu":"1"}}`)).
		wantCode(t, http.StatusCreated)
	wantUsed(t, ns, "pods=2,requests.cpu=1,limits.cpu=2,requests.memory=512Mi,count/pods=2")
	do(t, http.MethodPost, path, pod("p5", `{"requests":{"cpu":"0","memory":"0"},"limits":{"cpu":"0"}}`)).
		wantForbidden(t, "pods", "p5", "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2")
}

// TestExtendedResources: an extended resource is limited as
// requests.<name>; hugepages under both names.
func TestExtendedResources(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "requests.example.com/gpu=1,requests.hugepages-2Mi=4Mi"), "requests.example.com/gpu=0,requests.hugepages-2Mi=0")
	path := "/api/v1/namespaces/" + ns + "/pods"
	gpu := `{"requests":{"example.com/gpu":"1","hugepages-2Mi":"4Mi","cpu":"1","memory":"1Gi"},"limits":{"example.com/gpu":"1","hugepages-2Mi":"4Mi","cpu":"1","memory":"1Gi"}}`
	do(t, http.MethodPost, path, pod("g1", gpu)).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, pod("g2", gpu)).wantForbidden(t, "pods", "g2",
		"exceeded quota: q, requested: requests.example.com/gpu=1,requests.hugepages-2Mi=4Mi, used: requests.example.com/gpu=1,requests.hugepages-2Mi=4Mi, limited: requests.example.com/gpu=1,requests.hugepages-2Mi=4Mi")
	wantUsed(t, ns, "requests.example.com/gpu=1,requests.hugepages-2Mi=4Mi")
}

// TestScopes: a BestEffort quota counts only pods without resources, a
// Terminating one only pods with a deadline; others pass them by.
func TestScopes(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	best := quotaOf(t, "pods=1", corev1.ResourceQuotaScopeBestEffort)
	createQuota(t, ns, best, "pods=0")
	terminating := quotaOf(t, "pods=1", corev1.ResourceQuotaScopeTerminating)
	terminating.Name = "terminating"
	createQuota(t, ns, terminating, "pods=0")
	path := "/api/v1/namespaces/" + ns + "/pods"
	do(t, http.MethodPost, path, pod("b1", `{}`)).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, pod("b2", `{}`)).wantForbidden(t, "pods", "b2",
		"exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1")
	burstable := `{"requests":{"cpu":"100m"}}`
	do(t, http.MethodPost, path, pod("n1", burstable)).wantCode(t, http.StatusCreated)
	deadline := func(name string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"activeDeadlineSeconds":60,"containers":[{"name":"c","image":"i","resources":` + burstable + `}]}}`
	}
	do(t, http.MethodPost, path, deadline("t1")).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, deadline("t2")).wantForbidden(t, "pods", "t2",
		"exceeded quota: terminating, requested: pods=1, used: pods=1, limited: pods=1")
	wantUsed(t, ns, "pods=1")
}

// TestPriorityClassScope: a scopeSelector on PriorityClass counts only
// the pods of those classes.
func TestPriorityClassScope(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	q := quotaOf(t, "pods=0")
	q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"system-cluster-critical"}}}}
	createQuota(t, ns, q, "pods=0")
	path := "/api/v1/namespaces/" + ns + "/pods"
	do(t, http.MethodPost, path, pod("plain", `{}`)).wantCode(t, http.StatusCreated)
	critical := `{"metadata":{"name":"critical"},"spec":{"priorityClassName":"system-cluster-critical","containers":[{"name":"c","image":"i"}]}}`
	do(t, http.MethodPost, path, critical).wantForbidden(t, "pods", "critical",
		"exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0")
}

// TestScopeChange: an update that moves a pod into a quota's scope (a
// deadline makes it Terminating) is charged as kube charges it.
func TestScopeChange(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "pods=0", corev1.ResourceQuotaScopeTerminating), "pods=0")
	path := "/api/v1/namespaces/" + ns + "/pods"
	do(t, http.MethodPost, path, pod("p", `{}`)).wantCode(t, http.StatusCreated)
	do(t, http.MethodPatch, path+"/p", `{"spec":{"activeDeadlineSeconds":60}}`).wantForbidden(t, "pods", "p",
		"exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0")
	do(t, http.MethodPatch, path+"/p", `{"metadata":{"labels":{"a":"b"}}}`).wantCode(t, http.StatusOK)
}
