package autoregister

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/controllertest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// newStorage returns real apiservices storage on an etcd of the test's
// own.
func newStorage(t *testing.T) (Storage, context.Context) {
	t.Helper()
	st, info, err := apiregistration.NewRESTStorageProvider().NewGroupStorage(controllertest.NewGetter(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	ctx, cancel := context.WithTimeout(request.WithNamespace(context.Background(), ""), 30*time.Second)
	t.Cleanup(cancel)
	return st.APIServices, ctx
}

// start runs c until the test ends.
func start(t *testing.T, c *Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

var (
	apps  = schema.GroupVersion{Group: "apps", Version: "v1"}
	batch = schema.GroupVersion{Group: "batch", Version: "v1"}
	crd   = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}
)

func apiService(name, managedBy string, p Priority) *apiregistrationv1.APIService {
	gv := schema.GroupVersion{Version: name[:2], Group: name[3:]}
	s := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.Group, VersionPriority: p.Version},
	}
	if managedBy != "" {
		s.Labels = map[string]string{ManagedLabel: managedBy}
	}
	return s
}

func create(t *testing.T, ctx context.Context, s Storage, obj *apiregistrationv1.APIService) {
	t.Helper()
	if _, err := s.Create(ctx, obj, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", obj.Name, err)
	}
}

// eventually waits (bounded) until get(name) satisfies ok.
func eventually(t *testing.T, ctx context.Context, s Storage, name string, what string, ok func(*apiregistrationv1.APIService, error) bool) {
	t.Helper()
	var last error
	for range 500 {
		obj, err := s.Get(ctx, name, &metav1.GetOptions{})
		var as *apiregistrationv1.APIService
		if err == nil {
			as = obj.(*apiregistrationv1.APIService)
		}
		if ok(as, err) {
			return
		}
		last = err
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: %s never happened (last error %v)", name, what, last)
}

func exists(s *apiregistrationv1.APIService, err error) bool { return err == nil }
func gone(_ *apiregistrationv1.APIService, err error) bool   { return apierrors.IsNotFound(err) }

func TestOnStart(t *testing.T) {
	t.Parallel()
	s, ctx := newStorage(t)
	// Left from an earlier run: batch is no longer served, apps' spec
	// was changed; a user's APIService is never touched.
	create(t, ctx, s, apiService("v1.batch", ManageOnStart, Priority{17400, 15}))
	create(t, ctx, s, apiService("v1.apps", ManageOnStart, Priority{1, 1}))
	create(t, ctx, s, apiService("v1.mine.example.com", "", Priority{100, 10}))

	c := New(s)
	c.AddOnStart(apps, Priority{17800, 15})
	c.AddOnStart(schema.GroupVersion{Version: "v1"}, Priority{18000, 1})
	if err := c.Ready(); err == nil {
		t.Error("ready before the first pass")
	}
	start(t, c)
	eventually(t, ctx, s, "v1.", "creation", exists)
	eventually(t, ctx, s, "v1.batch", "deletion of a leftover", gone)
	eventually(t, ctx, s, "v1.apps", "the spec restored", func(a *apiregistrationv1.APIService, err error) bool {
		return err == nil && a.Spec.GroupPriorityMinimum == 17800
	})
	for range 500 {
		if c.Ready() == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Ready(); err != nil {
		t.Fatal(err)
	}
	obj, err := s.Get(ctx, "v1.", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	legacy := obj.(*apiregistrationv1.APIService)
	if legacy.Labels[ManagedLabel] != ManageOnStart || legacy.Spec.Group != "" || legacy.Spec.GroupPriorityMinimum != 18000 {
		t.Errorf("v1.: %+v %+v", legacy.Labels, legacy.Spec)
	}
	if m := legacy.ManagedFields; len(m) != 1 || m[0].Manager != "kube-apiserver" || m[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("v1.: managed fields %+v, want one Update by kube-apiserver", m)
	}

	// Once ensured, an onstart APIService is the user's to delete.
	if _, _, err := s.Delete(ctx, "v1.", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Syncing it again (as any change of it would) does not recreate it;
	// the user's is still there.
	if err := c.sync(ctx, "v1."); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "v1.", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("v1. after deletion: %v, want NotFound", err)
	}
	if _, err := s.Get(ctx, "v1.mine.example.com", &metav1.GetOptions{}); err != nil {
		t.Errorf("a user's APIService: %v", err)
	}
}

func TestContinuous(t *testing.T) {
	t.Parallel()
	s, ctx := newStorage(t)
	c := New(s)
	start(t, c)
	name := Name(crd)
	c.AddGroupVersion(crd, CustomResourcePriority)
	eventually(t, ctx, s, name, "creation", func(a *apiregistrationv1.APIService, err error) bool {
		return err == nil && a.Labels[ManagedLabel] == ManageContinuously && a.Spec.GroupPriorityMinimum == 1000 && a.Spec.VersionPriority == 100
	})

	// Kept: a changed spec is restored, a deleted one recreated.
	obj, err := s.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := obj.(*apiregistrationv1.APIService).DeepCopy()
	changed.Spec.VersionPriority = 7
	if _, _, err := s.Update(ctx, name, &rest.DefaultUpdatedObjectInfo{Obj: changed}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, s, name, "the spec restored", func(a *apiregistrationv1.APIService, err error) bool {
		return err == nil && a.Spec.VersionPriority == 100
	})
	if _, _, err := s.Delete(ctx, name, nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, s, name, "recreation", exists)

	c.RemoveGroupVersion(crd)
	eventually(t, ctx, s, name, "deletion", gone)
}

func TestUsersAPIServiceNotTaken(t *testing.T) {
	t.Parallel()
	s, ctx := newStorage(t)
	// A user registered the group version first: the controller leaves
	// it as it is, as kube's does.
	create(t, ctx, s, apiService("v1.stable.example.com", "", Priority{5, 5}))
	c := New(s)
	start(t, c)
	c.AddGroupVersion(crd, CustomResourcePriority)
	c.AddOnStart(batch, Priority{17400, 15})
	eventually(t, ctx, s, "v1.batch", "creation", exists)
	obj, err := s.Get(ctx, "v1.stable.example.com", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := obj.(*apiregistrationv1.APIService); a.Labels[ManagedLabel] != "" || a.Spec.GroupPriorityMinimum != 5 {
		t.Errorf("a user's APIService was changed: %+v %+v", a.Labels, a.Spec)
	}
}
