package aggregator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
)

func service(group, version string, groupPriority, versionPriority int32, remote bool) Remote {
	s := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: version + "." + group},
		Spec: apiregistrationv1.APIServiceSpec{Group: group, Version: version,
			GroupPriorityMinimum: groupPriority, VersionPriority: versionPriority},
	}
	if remote {
		s.Spec.Service = &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc"}
	}
	return Remote{APIService: s}
}

// TestDiscoveryOrder: remote groups go where kube's aggregator lists
// them among the local ones, which keep their order; a remote group's
// versions by versionPriority, then kube's version order.
func TestDiscoveryOrder(t *testing.T) {
	local := []*discovery.GroupVersion{
		{Group: "", Version: "v1"}, {Group: "apiregistration.k8s.io", Version: "v1"},
		{Group: "apps", Version: "v1"}, {Group: "batch", Version: "v1"}, {Group: "crd.example.com", Version: "v1"},
	}
	list := []Remote{
		service("apps", "v1", 17800, 15, false), service("batch", "v1", 17400, 15, false),
		service("crd.example.com", "v1", 1000, 100, false),
		service("metrics.k8s.io", "v1beta1", 100, 100, true),
		service("wardle.example.com", "v1alpha1", 1000, 15, true),
		service("wardle.example.com", "v1beta1", 1000, 15, true),
		service("first.example.com", "v1", 20000, 1, true),
		service("b.example.com", "v1", 1000, 100, true),
	}
	var got []string
	for _, gv := range Discovery(local, list) {
		got = append(got, gv.Group+"/"+gv.Version)
	}
	want := "/v1 apiregistration.k8s.io/v1 first.example.com/v1 apps/v1 batch/v1 b.example.com/v1 crd.example.com/v1 " +
		"wardle.example.com/v1beta1 wardle.example.com/v1alpha1 metrics.k8s.io/v1beta1"
	if strings.Join(got, " ") != want {
		t.Errorf("order:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
	if out := Discovery(local, list[:3]); len(out) != len(local) {
		t.Errorf("without remote APIServices the local list changed: %d entries", len(out))
	}
}

// TestCheck: a 2xx answer passes and its document is returned; any other
// status fails with kube's message.
func TestCheck(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusOK)
	ext := newExtension(t, nil, func(w http.ResponseWriter, r *http.Request) {
		code := int(status.Load())
		if r.Header.Get("X-Remote-User") != "system:kube-aggregator" || r.Header.Get("X-Remote-Group") != "system:masters" {
			code = http.StatusUnauthorized
		}
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(metav1.APIResourceList{GroupVersion: "wardle.example.com/v1alpha1",
			APIResources: []metav1.APIResource{{Name: "flunders", Namespaced: true, Kind: "Flunder"}}})
	})
	p := New(Config{Resolver: staticResolver{url: ext.url(t)}})
	s := apiService(ext.ca.PEM, false)
	list, err := p.Check(context.Background(), s)
	if err != nil || list == nil || list.APIResources[0].Name != "flunders" {
		t.Fatalf("check: %v, %v", list, err)
	}
	status.Store(http.StatusForbidden)
	_, err = p.Check(context.Background(), s)
	u := ext.srv.URL + "/apis/wardle.example.com/v1alpha1"
	if want := "failing or missing response from " + u + ": bad status from " + u + ": 403"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if err := p.CanCheck(apiService([]byte("junk"), true)); err == nil {
		t.Error("CanCheck passed a caBundle without a certificate")
	}
}
