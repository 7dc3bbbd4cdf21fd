package apfconfig

import (
	"context"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/controllertest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// newController returns a controller over real flowcontrol storages on
// an etcd of the test's own.
func newController(t *testing.T) (*Controller, context.Context) {
	t.Helper()
	info, err := flowcontrol.NewRESTStorageProvider().NewRESTStorage(controllertest.NewGetter(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	s := info.VersionedResourcesStorageMap["v1"]
	c := New(Config{
		FlowSchemas: s["flowschemas"].(Storage), FlowSchemaStatus: s["flowschemas/status"].(rest.Updater),
		PriorityLevels: s["prioritylevelconfigurations"].(Storage),
	})
	ctx, cancel := context.WithTimeout(request.WithNamespace(context.Background(), ""), 30*time.Second)
	t.Cleanup(cancel)
	return c, ctx
}

func getFS(t *testing.T, c *Controller, ctx context.Context, name string) *flowcontrolv1.FlowSchema {
	t.Helper()
	obj, err := c.cfg.FlowSchemas.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return obj.(*flowcontrolv1.FlowSchema)
}

func update(t *testing.T, c *Controller, ctx context.Context, s Storage, obj object) {
	t.Helper()
	if _, _, err := s.Update(ctx, obj.GetName(), &rest.DefaultUpdatedObjectInfo{Obj: obj}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update %s: %v", obj.GetName(), err)
	}
}

func TestEnsureCreatesKubesObjects(t *testing.T) {
	c, ctx := newController(t)
	if err := c.Ensured(); err == nil {
		t.Error("ensured before the first round")
	}
	if err := c.ensure(ctx); err != nil {
		t.Fatal(err)
	}
	fss, err := list[*flowcontrolv1.FlowSchema](ctx, c.cfg.FlowSchemas)
	if err != nil {
		t.Fatal(err)
	}
	pls, err := list[*flowcontrolv1.PriorityLevelConfiguration](ctx, c.cfg.PriorityLevels)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(bootstrap.MandatoryFlowSchemas) + len(bootstrap.SuggestedFlowSchemas); len(fss) != want {
		t.Errorf("%d flow schemas, want %d", len(fss), want)
	}
	if want := len(bootstrap.MandatoryPriorityLevelConfigurations) + len(bootstrap.SuggestedPriorityLevelConfigurations); len(pls) != want {
		t.Errorf("%d priority levels, want %d", len(pls), want)
	}
	for _, fs := range fss {
		if fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" || len(fs.ManagedFields) != 1 || fs.ManagedFields[0].Manager != producerManager {
			t.Errorf("%s: annotations %v, managed fields %+v", fs.Name, fs.Annotations, fs.ManagedFields)
		}
	}
	// A second round changes nothing.
	before := getFS(t, c, ctx, "global-default").ResourceVersion
	if err := c.ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if after := getFS(t, c, ctx, "global-default").ResourceVersion; after != before {
		t.Errorf("second round wrote global-default: %s -> %s", before, after)
	}
}

// TestEnsureMaintains: mandatory objects come back; a suggested one is
// restored while its annotation says so, left alone when it says false;
// objects kube created and no longer suggests go.
func TestEnsureMaintains(t *testing.T) {
	c, ctx := newController(t)
	if err := c.ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.cfg.FlowSchemas.Delete(ctx, "catch-all", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	restored := getFS(t, c, ctx, "global-default")
	restored.Spec.MatchingPrecedence = 9000
	update(t, c, ctx, c.cfg.FlowSchemas, restored)
	kept := getFS(t, c, ctx, "service-accounts")
	kept.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	kept.Spec.MatchingPrecedence = 8000
	update(t, c, ctx, c.cfg.FlowSchemas, kept)
	for name, annotation := range map[string]string{"retired": "true", "users-own": "false"} {
		fs := bootstrap.SuggestedFlowSchemaGlobalDefault.DeepCopy()
		fs.Name, fs.Annotations = name, map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: annotation}
		if _, err := c.cfg.FlowSchemas.Create(ctx, fs, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	if err := c.ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if fs := getFS(t, c, ctx, "catch-all"); fs.Spec.PriorityLevelConfiguration.Name != "catch-all" {
		t.Errorf("catch-all not restored: %+v", fs.Spec)
	}
	if fs := getFS(t, c, ctx, "global-default"); fs.Spec.MatchingPrecedence != 9900 || fs.Generation != 3 {
		t.Errorf("global-default: precedence %d generation %d, want kube's 9900 back (generation 3)", fs.Spec.MatchingPrecedence, fs.Generation)
	}
	if fs := getFS(t, c, ctx, "service-accounts"); fs.Spec.MatchingPrecedence != 8000 || fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "false" {
		t.Errorf("service-accounts changed by its user was revised: %d %v", fs.Spec.MatchingPrecedence, fs.Annotations)
	}
	if _, err := c.cfg.FlowSchemas.Get(ctx, "retired", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("retired: %v, want it deleted", err)
	}
	getFS(t, c, ctx, "users-own")

	// The administrator may change the exempt level's exempt settings.
	obj, err := c.cfg.PriorityLevels.Get(ctx, "exempt", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exempt := obj.(*flowcontrolv1.PriorityLevelConfiguration)
	exempt.Spec.Exempt.NominalConcurrencyShares = ptr.To[int32](7)
	update(t, c, ctx, c.cfg.PriorityLevels, exempt)
	if err := c.ensure(ctx); err != nil {
		t.Fatal(err)
	}
	obj, err = c.cfg.PriorityLevels.Get(ctx, "exempt", &metav1.GetOptions{})
	if err != nil || *obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec.Exempt.NominalConcurrencyShares != 7 {
		t.Errorf("exempt level: %v %+v", err, obj)
	}
}

// TestDangling: a flow schema naming a missing level gets Dangling=True,
// and False once the level exists, written by kube's consumer manager.
func TestDangling(t *testing.T) {
	c, ctx := newController(t)
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "mine"}, MatchingPrecedence: 500}}
	if _, err := c.cfg.FlowSchemas.Create(ctx, fs, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(status flowcontrolv1.ConditionStatus, reason string) {
		t.Helper()
		if err := c.syncDangling(ctx); err != nil {
			t.Fatal(err)
		}
		got := getFS(t, c, ctx, "mine")
		cond := conditionOf(got, flowcontrolv1.FlowSchemaConditionDangling)
		if cond == nil || cond.Status != status || cond.Reason != reason || cond.LastTransitionTime.IsZero() {
			t.Fatalf("condition %+v, want %s %s", cond, status, reason)
		}
		if m := got.ManagedFields[len(got.ManagedFields)-1]; m.Manager != consumerManager || m.Operation != metav1.ManagedFieldsOperationApply || m.Subresource != "status" {
			t.Errorf("managed fields %+v", got.ManagedFields)
		}
	}
	check(flowcontrolv1.ConditionTrue, "NotFound")
	pl := bootstrap.SuggestedPriorityLevelConfigurationGlobalDefault.DeepCopy()
	pl.Name = "mine"
	if _, err := c.cfg.PriorityLevels.Create(ctx, pl, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	check(flowcontrolv1.ConditionFalse, "Found")
	// In sync: nothing written.
	before := getFS(t, c, ctx, "mine").ResourceVersion
	if err := c.syncDangling(ctx); err != nil {
		t.Fatal(err)
	}
	if after := getFS(t, c, ctx, "mine").ResourceVersion; after != before {
		t.Errorf("a condition in sync was written again")
	}
}
