package legacytokentracking

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/controllertest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func configMaps(t *testing.T) *generic.Store {
	t.Helper()
	legacy, info, err := core.RESTStorageProvider{NoPodServiceAccount: true}.NewGroupStorage(controllertest.NewGetter(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	return legacy.ConfigMaps
}

var ctx = request.WithNamespace(context.Background(), metav1.NamespaceSystem)

func get(t *testing.T, s *generic.Store) (*corev1.ConfigMap, error) {
	t.Helper()
	obj, err := s.Get(ctx, Name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// clock is a settable now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestSyncCreatesOncePerInterval: the ConfigMap is created with the day's
// date by "kube-apiserver"; deleted, it is created again only once the
// creation limit allows, and Sync says when that is.
func TestSyncCreatesOncePerInterval(t *testing.T) {
	t.Parallel()
	s := configMaps(t)
	clk := &clock{t: time.Date(2026, 12, 7, 23, 30, 0, 0, time.UTC)}
	c := newController(s, rate.NewLimiter(rate.Every(CreationInterval), 1), clk.now)
	if again, err := c.Sync(ctx); err != nil || again != 0 {
		t.Fatalf("first sync: %v, again in %v", err, again)
	}
	cm, err := get(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data[SinceKey] != "2026-12-07" || len(cm.Data) != 1 {
		t.Errorf("data %v", cm.Data)
	}
	if mf := cm.ManagedFields; len(mf) != 1 || mf[0].Manager != "kube-apiserver" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("managed fields %+v", mf)
	}
	if _, _, err := s.Delete(ctx, Name, nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(10 * time.Minute)
	again, err := c.Sync(ctx)
	if err != nil || again != 20*time.Minute {
		t.Fatalf("sync within the interval: %v, again in %v (want 20m)", err, again)
	}
	if _, err := get(t, s); !apierrors.IsNotFound(err) {
		t.Fatalf("created again within the interval: %v", err)
	}
	clk.t = clk.t.Add(again)
	if again, err := c.Sync(ctx); err != nil || again != 0 {
		t.Fatalf("sync after the interval: %v, again in %v", err, again)
	}
	if cm, err := get(t, s); err != nil || cm.Data[SinceKey] != "2026-12-08" {
		t.Fatalf("created again: %v, %v", cm, err)
	}
}

// TestSyncRepairsDate: a date that does not parse is replaced by the
// day's; one that parses is kept, however old.
func TestSyncRepairsDate(t *testing.T) {
	t.Parallel()
	s := configMaps(t)
	clk := &clock{t: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	c := newController(s, rate.NewLimiter(rate.Every(CreationInterval), 1), clk.now)
	for _, tc := range []struct{ stored, want string }{{"2020-01-02", "2020-01-02"}, {"bad", "2026-12-07"}, {"", "2026-12-07"}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: metav1.NamespaceSystem}, Data: map[string]string{SinceKey: tc.stored, "other": "kept"}}
		if _, err := s.Create(ctx, cm, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := get(t, s)
		if err != nil {
			t.Fatal(err)
		}
		if got.Data[SinceKey] != tc.want || got.Data["other"] != "kept" {
			t.Errorf("stored %q: data %v, want since %q", tc.stored, got.Data, tc.want)
		}
		if _, _, err := s.Delete(ctx, Name, nil, &metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunFollowsChanges: Run repairs the ConfigMap when it changes, and
// recreates it when it is deleted and the limit allows (here, at once).
func TestRunFollowsChanges(t *testing.T) {
	t.Parallel()
	s := configMaps(t)
	c := newController(s, rate.NewLimiter(rate.Inf, 1), time.Now)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	valid := func() bool {
		cm, err := get(t, s)
		if err != nil {
			return false
		}
		_, err = time.Parse(DateLayout, cm.Data[SinceKey])
		return err == nil
	}
	waitFor(t, "created", valid)
	cm, _ := get(t, s)
	cm.Data[SinceKey] = "not a date"
	if _, _, err := s.Update(ctx, Name, &rest.DefaultUpdatedObjectInfo{Obj: cm}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "date repaired", valid)
	if _, _, err := s.Delete(ctx, Name, nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "created again", valid)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 300 {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not %s within 15s", what)
}
