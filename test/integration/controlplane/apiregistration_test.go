package controlplane

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestAPIServiceTranscript replays requests kube-apiserver v1.37.2
// answered (testdata/apiregistration.json): validation errors, a Local
// APIService available at once, status kept by the main resource and
// spec by /status, a service reference stored (with its port defaulted),
// and the Local APIServices kept for the served groups, with the labels
// and managed fields kube-apiserver's autoregistration leaves.
func TestAPIServiceTranscript(t *testing.T) {
	t.Parallel()
	replay(t, "apiregistration")
}

// kubeAPIService is an APIService as recorded from kube-apiserver
// v1.37.2 (testdata/kube-apiservices.json): what does not change between
// runs.
type kubeAPIService struct {
	Name       string                                  `json:"name"`
	Labels     map[string]string                       `json:"labels"`
	Spec       apiregistrationv1.APIServiceSpec        `json:"spec"`
	Conditions []apiregistrationv1.APIServiceCondition `json:"conditions"`
}

// TestLocalAPIServicesAsKube checks that every group version the server
// serves has the Local APIService kube-apiserver v1.37.2 lists for it
// (kubectl get apiservices on the reference, with its priorities and
// labels), and that there is no other: the groups kube serves and this
// server does not yet (owned by other issues) are the only ones missing.
func TestLocalAPIServicesAsKube(t *testing.T) {
	t.Parallel()
	var recorded struct {
		Items []kubeAPIService `json:"items"`
	}
	data, err := os.ReadFile("testdata/kube-apiservices.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &recorded); err != nil {
		t.Fatal(err)
	}
	kube := map[string]kubeAPIService{}
	for _, s := range recorded.Items {
		kube[s.Name] = s
	}

	served := map[string]bool{}
	groups, err := clientset(t).Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			if g.Name != apiregistrationv1.GroupName {
				served[v.Version+"."+g.Name] = true
			}
		}
	}
	if !served["v1."] {
		t.Fatalf("discovery lists no legacy v1: %v", served)
	}

	list, err := dynamic.NewForConfigOrDie(srv.ClientConfig).Resource(apiregistrationv1.SchemeGroupVersion.WithResource("apiservices")).
		List(ctx(t), metav1.ListOptions{LabelSelector: "kube-aggregator.kubernetes.io/automanaged"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, item := range list.Items {
		var s apiregistrationv1.APIService
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &s); err != nil {
			t.Fatal(err)
		}
		got[s.Name] = true
		want, ok := kube[s.Name]
		if !ok {
			t.Errorf("APIService %s: kube-apiserver lists none", s.Name)
			continue
		}
		for i := range s.Status.Conditions {
			s.Status.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		gotAsKube := kubeAPIService{Name: s.Name, Labels: s.Labels, Spec: s.Spec, Conditions: s.Status.Conditions}
		if diff := cmp.Diff(want, gotAsKube); diff != "" {
			t.Errorf("APIService %s differs from kube's (-kube +this server):\n%s", s.Name, diff)
		}
	}
	for name := range served {
		if !got[name] {
			t.Errorf("served group version %s has no APIService", name)
		}
	}
	for name := range kube {
		if !got[name] && served[name] {
			t.Errorf("kube's APIService %s is missing", name)
		}
	}
}
