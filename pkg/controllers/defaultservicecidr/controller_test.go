package defaultservicecidr_test

import (
	"context"
	"net/netip"
	"testing"

	"go.uber.org/goleak"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/defaultservicecidr"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func newStorage(t *testing.T) networking.GroupStorage {
	t.Helper()
	etcd := etcdtest.Start(t)
	getter := generic.UndecoratedRESTOptions{Factory: etcd3.NewFactory(etcd.Client), Prefix: "/registry"}
	s, info, err := networking.RESTStorageProvider{}.NewGroupStorage(getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	return s
}

func get(t *testing.T, s networking.GroupStorage) *networkingv1.ServiceCIDR {
	t.Helper()
	obj, err := s.ServiceCIDRs.Get(request.WithNamespace(context.Background(), ""), defaultservicecidr.Name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*networkingv1.ServiceCIDR)
}

// TestSync: the default ServiceCIDR is created from the flags' range by
// kube-apiserver, made Ready by kube's controller (a forced apply of its
// status), left alone once so, and created again when deleted.
func TestSync(t *testing.T) {
	s := newStorage(t)
	c := defaultservicecidr.New(s.ServiceCIDRs, s.ServiceCIDRStatus, netip.MustParsePrefix("10.96.0.0/16"))
	ctx := context.Background()
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sc := get(t, s)
	if len(sc.Spec.CIDRs) != 1 || sc.Spec.CIDRs[0] != "10.96.0.0/16" {
		t.Errorf("cidrs %v", sc.Spec.CIDRs)
	}
	if cs := sc.Status.Conditions; len(cs) != 1 || cs[0].Type != "Ready" || cs[0].Status != metav1.ConditionTrue ||
		cs[0].Message != "Kubernetes default Service CIDR is ready" || cs[0].Reason != "" || cs[0].LastTransitionTime.IsZero() {
		t.Errorf("conditions %+v", cs)
	}
	managers := map[string]string{}
	for _, e := range sc.ManagedFields {
		managers[e.Manager] = string(e.Operation) + "/" + e.Subresource
	}
	if managers["kube-apiserver"] != "Update/" || managers["kubernetes-service-cidr-controller"] != "Apply/status" || len(managers) != 2 {
		t.Errorf("managers %v", managers)
	}

	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if again := get(t, s); again.ResourceVersion != sc.ResourceVersion {
		t.Errorf("a second sync wrote: resourceVersion %s -> %s", sc.ResourceVersion, again.ResourceVersion)
	}

	nsCtx := request.WithNamespace(ctx, "")
	if _, _, err := s.ServiceCIDRs.Delete(nsCtx, defaultservicecidr.Name, nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if recreated := get(t, s); recreated.UID == sc.UID || len(recreated.Status.Conditions) != 1 {
		t.Errorf("not created again: %+v", recreated)
	}
}

// TestSyncLeavesOthersAlone: a default ServiceCIDR that does not match the
// flags, or that another controller marked not Ready, is not touched.
func TestSyncLeavesOthersAlone(t *testing.T) {
	s := newStorage(t)
	ctx := request.WithNamespace(context.Background(), "")
	if _, err := s.ServiceCIDRs.Create(ctx, &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: defaultservicecidr.Name},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.1.0.0/16"}},
	}, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := defaultservicecidr.New(s.ServiceCIDRs, s.ServiceCIDRStatus, netip.MustParsePrefix("10.96.0.0/16")).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if sc := get(t, s); sc.Spec.CIDRs[0] != "10.1.0.0/16" || len(sc.Status.Conditions) != 0 {
		t.Errorf("mismatched ServiceCIDR changed: %+v", sc)
	}

	notReady := get(t, s)
	notReady.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Test", LastTransitionTime: metav1.Now()}}
	if _, _, err := s.ServiceCIDRStatus.Update(ctx, notReady.Name, &rest.DefaultUpdatedObjectInfo{Obj: notReady}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := defaultservicecidr.New(s.ServiceCIDRs, s.ServiceCIDRStatus, netip.MustParsePrefix("10.1.0.0/16")).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if sc := get(t, s); sc.Status.Conditions[0].Status != metav1.ConditionFalse {
		t.Errorf("not Ready condition replaced: %+v", sc.Status.Conditions)
	}
}
