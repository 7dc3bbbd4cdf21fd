package quota

import (
	"net/http"
	"testing"
)

func service(name, typ string) string {
	return `{"metadata":{"name":"` + name + `"},"spec":{"type":"` + typ + `","ports":[{"name":"a","port":80},{"name":"b","port":81}]}}`
}

// TestServices: load balancers and node ports are counted by type, on
// create and when an update changes the type.
func TestServices(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "services=3,services.loadbalancers=1,services.nodeports=2"),
		"services=0,services.loadbalancers=0,services.nodeports=0")
	path := "/api/v1/namespaces/" + ns + "/services"
	do(t, http.MethodPost, path, service("lb1", "LoadBalancer")).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, service("lb2", "LoadBalancer")).wantForbidden(t, "services", "lb2",
		"exceeded quota: q, requested: services.loadbalancers=1,services.nodeports=2, used: services.loadbalancers=1,services.nodeports=2, limited: services.loadbalancers=1,services.nodeports=2")
	do(t, http.MethodPost, path, service("c1", "ClusterIP")).wantCode(t, http.StatusCreated)
	wantUsed(t, ns, "services=2,services.loadbalancers=1,services.nodeports=2")
	// A change of type is charged the growth: here two node ports over.
	do(t, http.MethodPatch, path+"/c1", `{"spec":{"type":"NodePort"}}`).wantForbidden(t, "services", "c1",
		"exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=2, limited: services.nodeports=2")
	do(t, http.MethodPatch, path+"/c1", `{"metadata":{"labels":{"a":"b"}}}`).wantCode(t, http.StatusOK)
	wantUsed(t, ns, "services=2,services.loadbalancers=1,services.nodeports=2")
}

// TestClaims: claims are counted with their storage, in all and per
// storage class.
func TestClaims(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	createQuota(t, ns, quotaOf(t, "requests.storage=10Gi,gold.storageclass.storage.k8s.io/requests.storage=3Gi,gold.storageclass.storage.k8s.io/persistentvolumeclaims=5"),
		"requests.storage=0,gold.storageclass.storage.k8s.io/requests.storage=0,gold.storageclass.storage.k8s.io/persistentvolumeclaims=0")
	path := "/api/v1/namespaces/" + ns + "/persistentvolumeclaims"
	claim := func(name, class, size string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"storageClassName":"` + class + `","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"` + size + `"}}}}`
	}
	do(t, http.MethodPost, path, claim("g1", "gold", "2Gi")).wantCode(t, http.StatusCreated)
	do(t, http.MethodPost, path, claim("g2", "gold", "2Gi")).wantForbidden(t, "persistentvolumeclaims", "g2",
		"exceeded quota: q, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: gold.storageclass.storage.k8s.io/requests.storage=2Gi, limited: gold.storageclass.storage.k8s.io/requests.storage=3Gi")
	do(t, http.MethodPost, path, claim("s1", "silver", "7Gi")).wantCode(t, http.StatusCreated)
	wantUsed(t, ns, "requests.storage=9Gi,gold.storageclass.storage.k8s.io/requests.storage=2Gi,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1")
}
