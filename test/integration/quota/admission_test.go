package quota

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func configMap(name string) string {
	return `{"metadata":{"name":"` + name + `"}}`
}

// TestConfigMapCount: the third ConfigMap under configmaps=2 is refused
// with kube's message, and the quota shows the two it admitted.
func TestConfigMapCount(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "configmaps=2,count/configmaps=5"), "configmaps=0,count/configmaps=0")
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	do(t, http.MethodPost, path, configMap("cm1")).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, configMap("cm2")).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, configMap("cm3")).wantForbidden(t, "configmaps", "cm3",
		"exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2")
	wantUsed(t, ns, "configmaps=2,count/configmaps=2")
	// A delete gives nothing back: kcm's controller recounts.
	do(t, http.MethodDelete, path+"/cm1", "").wantCode(t, http.StatusOK)
	wantUsed(t, ns, "configmaps=2,count/configmaps=2")
}

// TestStatusUnknown: a quota whose controller has not counted yet
// (status.used lacks a resource it limits) refuses what it limits, and
// only that.
func TestStatusUnknown(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	q := createQuota(t, ns, quotaOf(t, "configmaps=2,secrets=3"), "")
	do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("cm1")).wantCode(t, http.StatusCreated)
	q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: list(t, "secrets=0")}
	if _, err := clientset(t).CoreV1().ResourceQuotas(ns).UpdateStatus(t.Context(), q, metav1UpdateOptions); err != nil {
		t.Fatal(err)
	}
	do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("cm2")).wantForbidden(t, "configmaps", "cm2",
		"status unknown for quota: q, resources: configmaps")
	do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/secrets", `{"metadata":{"name":"s"}}`).wantCode(t, http.StatusCreated)
	wantUsed(t, ns, "secrets=1")
}

// TestDryRun: a dry run is checked against the quota but not charged.
func TestDryRun(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "configmaps=1"), "configmaps=0")
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	do(t, http.MethodPost, path+"?dryRun=All", configMap("dry")).wantCode(t, http.StatusCreated)
	wantUsed(t, ns, "configmaps=0")
	do(t, http.MethodPost, path, configMap("cm1")).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path+"?dryRun=All", configMap("dry")).wantForbidden(t, "configmaps", "dry",
		"exceeded quota: q, requested: configmaps=1, used: configmaps=1, limited: configmaps=1")
	wantUsed(t, ns, "configmaps=1")
}

// TestConcurrentCreates: of n creates at once under a quota of n/2,
// exactly n/2 are admitted, and the quota says so.
func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	const n = 16
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, fmt.Sprintf("secrets=%d", n/2)), "secrets=0")
	path := "/api/v1/namespaces/" + ns + "/secrets"
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = do(t, http.MethodPost, path, fmt.Sprintf(`{"metadata":{"name":"s%d"}}`, i)).code
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[http.StatusCreated] != n/2 || count[http.StatusForbidden] != n/2 {
		t.Errorf("codes %v, want %d created and %d forbidden", count, n/2, n/2)
	}
	wantUsed(t, ns, fmt.Sprintf("secrets=%d", n/2))
}

// TestObjectCountOfGroup: count/<resource>.<group> limits any resource,
// here Deployments.
func TestObjectCountOfGroup(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "count/deployments.apps=1"), "count/deployments.apps=0")
	path := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	deployment := func(name string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"selector":{"matchLabels":{"a":"b"}},` +
			`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	}
	do(t, http.MethodPost, path, deployment("d1")).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, deployment("d2")).wantForbidden(t, "deployments.apps", "d2",
		"exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1")
	wantUsed(t, ns, "count/deployments.apps=1")
}

// TestLimitedResources: the configuration's limitedResources refuse a
// podtemplate in a namespace without a quota on podtemplates.
func TestLimitedResources(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	path := "/api/v1/namespaces/" + ns + "/podtemplates"
	template := func(name string) string {
		return `{"metadata":{"name":"` + name + `"},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`
	}
	do(t, http.MethodPost, path, template("t1")).wantForbidden(t, "podtemplates", "t1",
		"insufficient quota to consume: count/podtemplates")
	createQuota(t, ns, quotaOf(t, "count/podtemplates=1"), "count/podtemplates=0")
	do(t, http.MethodPost, path, template("t1")).wantCode(t, http.StatusCreated)
	wantUsed(t, ns, "count/podtemplates=1")
}
