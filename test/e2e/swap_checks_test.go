package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"
)

// encryptedPrefix begins a value kube's aescbc provider wrote with the
// key named key1 (kube's format, k8s:enc:<provider>:v1:<key>:).
const encryptedPrefix = "k8s:enc:aescbc:v1:key1:"

// waitServiceIPs waits until service name's EndpointSlices list exactly
// the ready addresses want.
func (s *swapCluster) waitServiceIPs(t *testing.T, name string, want []string) {
	t.Helper()
	s.eventually(t, waitLong, fmt.Sprintf("EndpointSlices of service %s with the ready pod IPs %v", name, want), s.ns, func() (string, bool, error) {
		list, err := s.client.DiscoveryV1().EndpointSlices(s.ns).List(t.Context(),
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if err != nil {
			return "", false, err
		}
		var ips []string
		for _, sl := range list.Items {
			for _, e := range sl.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					ips = append(ips, e.Addresses...)
				}
			}
		}
		slices.Sort(ips)
		return fmt.Sprintf("%d slices, ready addresses %v", len(list.Items), ips), slices.Equal(ips, want), nil
	})
}

// writeSecret creates Secret name holding value, and checks etcd holds
// it encrypted.
func (s *swapCluster) writeSecret(t *testing.T, name, value string) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"password": value}}
	if _, err := s.client.CoreV1().Secrets(s.ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating secret %s through %s: %v", name, s.server.name, err)
	}
	s.checkEncrypted(t, name)
}

// readSecret checks that client reads Secret name holding value.
func (s *swapCluster) readSecret(t *testing.T, client kubernetes.Interface, name, value string) {
	t.Helper()
	got, err := client.CoreV1().Secrets(s.ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("reading secret %s: %v", name, err)
		return
	}
	if string(got.Data["password"]) != value {
		t.Errorf("secret %s holds %q, want %q", name, got.Data["password"], value)
	}
}

// checkEncrypted checks that etcd holds Secret name encrypted by aescbc.
func (s *swapCluster) checkEncrypted(t *testing.T, name string) {
	t.Helper()
	key := "/registry/secrets/" + s.ns + "/" + name
	resp, err := s.etcd.Get(t.Context(), key)
	switch {
	case err != nil:
		t.Errorf("reading %s from etcd: %v", key, err)
	case len(resp.Kvs) != 1:
		t.Errorf("etcd has no %s", key)
	case !strings.HasPrefix(string(resp.Kvs[0].Value), encryptedPrefix):
		t.Errorf("etcd holds %s unencrypted: %.40q..., want it to begin %q", key, resp.Kvs[0].Value, encryptedPrefix)
	}
}

// snapshotResources are the resources compared before and after a swap:
// those the test, the components and the nodes write.
var snapshotResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "nodes"},
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"},
	{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
	{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// snapshot lists the metadata of every snapshotResource through the
// server s.port has now, at resourceVersion rv exactly (at the latest
// when ""), and returns the version listed at and, by resource and
// namespace/name, each object's uid and resourceVersion.
func (s *swapCluster) snapshot(t *testing.T, rv string) (string, map[string]string) {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", s.pki.path("admin.conf"))
	if err != nil {
		t.Fatal(err)
	}
	client := metadata.NewForConfigOrDie(config)
	if rv == "" {
		list, err := client.Resource(snapshotResources[0]).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing namespaces through %s: %v", s.server.name, err)
		}
		rv = list.ResourceVersion
	}
	objects := map[string]string{}
	for _, gvr := range snapshotResources {
		list, err := client.Resource(gvr).List(t.Context(), metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if err != nil {
			t.Errorf("listing %s at resourceVersion %s exactly through %s: %v", gvr.GroupResource(), rv, s.server.name, err)
			continue
		}
		if list.ResourceVersion != rv {
			t.Errorf("listing %s at resourceVersion %s exactly through %s: the list's resourceVersion is %s", gvr.GroupResource(), rv, s.server.name, list.ResourceVersion)
		}
		for _, o := range list.Items {
			objects[gvr.GroupResource().String()+" "+o.Namespace+"/"+o.Name] = fmt.Sprintf("uid %s rv %s", o.UID, o.ResourceVersion)
		}
	}
	t.Logf("%s lists %d objects of %d resources at resourceVersion %s", s.server.name, len(objects), len(snapshotResources), rv)
	return rv, objects
}

// compareSnapshots fails t with every object listed in one snapshot and
// not the other, or listed differently.
func compareSnapshots(t *testing.T, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for k, b := range before {
		if a, ok := after[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("lost: %s (%s)", k, b))
		} else if a != b {
			diffs = append(diffs, fmt.Sprintf("changed: %s: %s, then %s", k, b, a))
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("new: %s (%s)", k, a))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("the new server lists %d objects differently at the same resourceVersion:\n%s", len(diffs), strings.Join(diffs[:min(len(diffs), 50)], "\n"))
	}
}
