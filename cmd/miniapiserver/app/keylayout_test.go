package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// kubeKeyPrefixes is where kube-apiserver v1.37.2 keeps each built-in
// resource under --etcd-prefix, read from its source: the resource name
// unless k8s.io/kubernetes pkg/kubeapiserver SpecialDefaultResourcePrefixes
// says otherwise; cohabitating resources (events.k8s.io events) share
// their first resource's prefix; apiextensions-apiserver and
// kube-aggregator key theirs <group>/<resource> (k8s.io/apiserver
// SimpleStorageFactory).
var kubeKeyPrefixes = map[string]string{
	"bindings": "", "componentstatuses": "", "configmaps": "configmaps", "endpoints": "services/endpoints",
	"events": "events", "limitranges": "limitranges", "namespaces": "namespaces", "nodes": "minions",
	"persistentvolumeclaims": "persistentvolumeclaims", "persistentvolumes": "persistentvolumes", "pods": "pods",
	"podtemplates": "podtemplates", "replicationcontrollers": "controllers", "resourcequotas": "resourcequotas",
	"secrets": "secrets", "serviceaccounts": "serviceaccounts", "services": "services/specs",
	"selfsubjectreviews.authentication.k8s.io": "", "tokenreviews.authentication.k8s.io": "",
	"ingressclasses.networking.k8s.io": "ingressclasses", "ingresses.networking.k8s.io": "ingress",
	"ipaddresses.networking.k8s.io": "ipaddresses", "networkpolicies.networking.k8s.io": "networkpolicies",
	"servicecidrs.networking.k8s.io": "servicecidrs", "poddisruptionbudgets.policy": "poddisruptionbudgets",
	"customresourcedefinitions.apiextensions.k8s.io": "apiextensions.k8s.io/customresourcedefinitions",
	"events.events.k8s.io":                           "events",
	"apiservices.apiregistration.k8s.io":             "apiregistration.k8s.io/apiservices",
	"clusterrolebindings.rbac.authorization.k8s.io":  "clusterrolebindings",
	"clusterroles.rbac.authorization.k8s.io":         "clusterroles",
	"rolebindings.rbac.authorization.k8s.io":         "rolebindings", "roles.rbac.authorization.k8s.io": "roles",
	"mutatingadmissionpolicies.admissionregistration.k8s.io":         "mutatingadmissionpolicies",
	"mutatingadmissionpolicybindings.admissionregistration.k8s.io":   "mutatingadmissionpolicybindings",
	"mutatingwebhookconfigurations.admissionregistration.k8s.io":     "mutatingwebhookconfigurations",
	"validatingadmissionpolicies.admissionregistration.k8s.io":       "validatingadmissionpolicies",
	"validatingadmissionpolicybindings.admissionregistration.k8s.io": "validatingadmissionpolicybindings",
	"validatingwebhookconfigurations.admissionregistration.k8s.io":   "validatingwebhookconfigurations",
	"controllerrevisions.apps":                                       "controllerrevisions", "daemonsets.apps": "daemonsets", "deployments.apps": "deployments",
	"replicasets.apps": "replicasets", "statefulsets.apps": "statefulsets",
	"csidrivers.storage.k8s.io": "csidrivers", "csinodes.storage.k8s.io": "csinodes",
	"csistoragecapacities.storage.k8s.io": "csistoragecapacities", "storageclasses.storage.k8s.io": "storageclasses",
	"volumeattachments.storage.k8s.io": "volumeattachments", "volumeattributesclasses.storage.k8s.io": "volumeattributesclasses",
	"priorityclasses.scheduling.k8s.io": "priorityclasses",
	"deviceclasses.resource.k8s.io":     "deviceclasses", "devicetaintrules.resource.k8s.io": "devicetaintrules",
	"resourceclaims.resource.k8s.io": "resourceclaims", "resourceclaimtemplates.resource.k8s.io": "resourceclaimtemplates",
	"resourceslices.resource.k8s.io": "resourceslices", "runtimeclasses.node.k8s.io": "runtimeclasses",
	"storageversionmigrations.storagemigration.k8s.io":         "storageversionmigrations",
	"horizontalpodautoscalers.autoscaling":                     "horizontalpodautoscalers",
	"certificatesigningrequests.certificates.k8s.io":           "certificatesigningrequests",
	"clustertrustbundles.certificates.k8s.io":                  "clustertrustbundles",
	"podcertificaterequests.certificates.k8s.io":               "podcertificaterequests",
	"endpointslices.discovery.k8s.io":                          "endpointslices",
	"flowschemas.flowcontrol.apiserver.k8s.io":                 "flowschemas",
	"prioritylevelconfigurations.flowcontrol.apiserver.k8s.io": "prioritylevelconfigurations",
	"localsubjectaccessreviews.authorization.k8s.io":           "", "selfsubjectaccessreviews.authorization.k8s.io": "",
	"selfsubjectrulesreviews.authorization.k8s.io": "", "subjectaccessreviews.authorization.k8s.io": "",
	"cronjobs.batch": "cronjobs", "jobs.batch": "jobs", "leases.coordination.k8s.io": "leases",
}

// kubeOtherKeys are keys kube-apiserver keeps outside any resource's
// prefix: the node port allocator's bitmap.
var kubeOtherKeys = []string{"ranges/servicenodeports"}

// TestKeyLayout: every served resource is stored at kube-apiserver's key
// prefix (an empty prefix: a resource nothing stores), and every key the
// server writes while it starts is under one of them.
func TestKeyLayout(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t)
	_, lists, err := discovery.NewDiscoveryClientForConfigOrDie(ts.ClientConfig).ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			want, ok := kubeKeyPrefixes[gr.String()]
			if !ok {
				t.Errorf("%s is served, but not in kube's key table: add where kube-apiserver v1.37.2 keeps it", gr)
				continue
			}
			if got := app.ResourcePrefix("/registry", gr); want != "" && got != "/registry/"+want {
				t.Errorf("%s is stored under %s, kube-apiserver keeps it under /registry/%s", gr, got, want)
			}
		}
	}

	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{ts.Server.EtcdURL}, TLS: ts.Server.EtcdTLS, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	resp, err := etcd.Get(context.Background(), "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	known := append([]string(nil), kubeOtherKeys...)
	for _, p := range kubeKeyPrefixes {
		if p != "" {
			known = append(known, p+"/")
		}
	}
	for _, kv := range resp.Kvs {
		key := strings.TrimPrefix(string(kv.Key), "/registry/")
		if !hasAnyPrefix(key, known) {
			t.Errorf("the server wrote %s, where kube-apiserver keeps nothing", kv.Key)
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
