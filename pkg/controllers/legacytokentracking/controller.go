// Package legacytokentracking keeps kube-system's
// kube-apiserver-legacy-service-account-token-tracking ConfigMap, as
// kube-apiserver's controller of that name does. Its "since" date tells
// kube-controller-manager's legacy token cleaner since when the API
// servers have tracked the use of secret-based service account tokens:
// the cleaner deletes no token unused for less than that.
//
// The controller creates the ConfigMap with today's date when it is
// missing, and gives it today's date again when its date does not parse.
// Creations are rate limited as kube's are, to one per 30 minutes: in a
// cluster whose API servers disagree on the tracking (some delete the
// ConfigMap), they would otherwise fight. Checked against kube-apiserver
// v1.37.2: the ConfigMap deleted right after a fresh start (whose own
// creation took the one creation allowed) stays deleted for that while.
package legacytokentracking

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/backoff"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// The ConfigMap, its key and the date's layout (kube's).
const (
	Name       = "kube-apiserver-legacy-service-account-token-tracking"
	SinceKey   = "since"
	DateLayout = "2006-01-02"
)

// CreationInterval is how often the ConfigMap may be created (kube's).
const CreationInterval = 30 * time.Minute

// ConfigMaps is what the controller needs of the configmaps storage.
type ConfigMaps interface {
	follow.Source
	rest.Getter
	rest.Creater
	rest.Updater
}

// Controller keeps the ConfigMap. Sync may be called before Run (the
// server's bootstrap does); both share the creation limit.
type Controller struct {
	configMaps ConfigMaps
	creater    rest.Creater // configMaps, recording "kube-apiserver" as manager
	updater    rest.Updater // the same
	creations  *rate.Limiter
	now        func() time.Time
	wake       queue.Signal
}

// New returns the controller of the ConfigMap in configMaps.
func New(configMaps ConfigMaps) *Controller {
	return newController(configMaps, rate.NewLimiter(rate.Every(CreationInterval), 1), time.Now)
}

func newController(configMaps ConfigMaps, creations *rate.Limiter, now func() time.Time) *Controller {
	kind := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	return &Controller{
		configMaps: configMaps,
		creater:    fieldmanager.TrackingCreater(configMaps, kind, "kube-apiserver"),
		updater:    fieldmanager.TrackingUpdater(configMaps, kind, "", "kube-apiserver"),
		creations:  creations, now: now, wake: queue.NewSignal(),
	}
}

// retryPolicy paces the syncs after failures (kube's workqueue: from 5 ms
// doubling, here capped at a minute).
var retryPolicy = backoff.Policy{Initial: 5 * time.Millisecond, Max: time.Minute, Jitter: 0.1}

// Run syncs the ConfigMap whenever it changes, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	loop := follow.New(follow.Config{
		Name: "legacy token tracking: configmaps", Source: c.configMaps,
		Handler: oneObject{suffix: "/" + metav1.NamespaceSystem + "/" + Name, changed: c.wake.Notify},
	})
	done := make(chan struct{})
	go func() { defer close(done); loop.Run(ctx) }()
	defer func() { <-done }()

	retries := backoff.New(retryPolicy)
	timer := time.NewTimer(0) // a first sync at once
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-timer.C:
		}
		again, err := c.Sync(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			slog.Warn("legacy token tracking", "err", err)
			again = retries.Next(0)
		} else {
			retries = backoff.New(retryPolicy)
		}
		if again > 0 {
			timer.Reset(again)
		}
	}
}

// Sync creates the ConfigMap when it is missing and the creation limit
// allows (otherwise it returns how long until it does), and gives it
// today's date when its date does not parse. A date already there is
// kept: the tracking began then.
func (c *Controller) Sync(ctx context.Context) (again time.Duration, err error) {
	ctx = request.WithNamespace(ctx, metav1.NamespaceSystem)
	obj, err := c.configMaps.Get(ctx, Name, &metav1.GetOptions{})
	now := c.now()
	today := now.UTC().Format(DateLayout)
	switch {
	case apierrors.IsNotFound(err):
		return c.create(ctx, now, today)
	case err != nil:
		return 0, err
	}
	cm := obj.(*corev1.ConfigMap)
	if _, err := time.Parse(DateLayout, cm.Data[SinceKey]); err == nil {
		return 0, nil
	}
	cm = cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[SinceKey] = today
	_, _, err = c.updater.Update(ctx, cm.Name, &rest.DefaultUpdatedObjectInfo{Obj: cm}, nil, nil, false, &metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return 0, nil // changed meanwhile: its event syncs again
	}
	return 0, err
}

func (c *Controller) create(ctx context.Context, now time.Time, today string) (time.Duration, error) {
	r := c.creations.ReserveN(now, 1)
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now)
		return delay, nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: metav1.NamespaceSystem},
		Data: map[string]string{SinceKey: today}}
	_, err := c.creater.Create(ctx, cm, nil, &metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return 0, nil // another replica made it
	case err != nil:
		r.CancelAt(now) // a failed attempt does not use up the limit
		return 0, err
	}
	return 0, nil
}

// oneObject is a follow.Handler that calls changed after every list, and
// after every event of the object whose storage key ends with suffix:
// the controller reads no other ConfigMap, and decodes none.
type oneObject struct {
	suffix  string
	changed func()
}

func (h oneObject) OnList([]*storage.Object, int64) error {
	h.changed()
	return nil
}

func (h oneObject) OnEvent(ev storage.Event) error {
	if strings.HasSuffix(ev.Object.Key, h.suffix) {
		h.changed()
	}
	return nil
}
