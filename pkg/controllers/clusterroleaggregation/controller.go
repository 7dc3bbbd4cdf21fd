// Package clusterroleaggregation keeps aggregated ClusterRoles (those
// with an aggregationRule, such as admin, edit and view) holding the rules
// of every ClusterRole their selectors match, as kube-controller-manager's
// clusterrole-aggregation controller does, so that they work without one.
//
// It computes the rules exactly as kube's controller (the matching roles
// by name, each rule once, in order) and writes them the same way (a
// forced server-side apply of the rules by the field manager
// "clusterrole-aggregation-controller"): when kube's controller runs
// against this server too, both want the same object, and whichever
// writes second finds nothing to change.
package clusterroleaggregation

import (
	"context"
	"errors"
	"log/slog"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Manager is the field manager of the rules written, kube's controller's.
const Manager = "clusterrole-aggregation-controller"

// ClusterRoles is what the controller needs of the cluster roles' storage.
type ClusterRoles interface {
	rest.Updater
}

// Controller aggregates cluster roles.
type Controller struct {
	cache *rbacrules.Cache
	store ClusterRoles
	// retry is how long a failed pass waits before the next.
	retry time.Duration
}

// New returns a controller reading cluster roles from cache and writing
// them to store.
func New(cache *rbacrules.Cache, store ClusterRoles) *Controller {
	return &Controller{cache: cache, store: store, retry: time.Second}
}

// Run aggregates until ctx ends: once the cache synced, then after every
// change of a cluster role.
func (c *Controller) Run(ctx context.Context) {
	if err := c.cache.WaitForSync(ctx); err != nil {
		return
	}
	ctx = request.WithUser(request.WithNamespace(ctx, ""), &user.DefaultInfo{
		Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated},
	})
	fm, err := fieldmanager.New(rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), "", c.store)
	if err != nil {
		slog.Error("clusterrole aggregation: building the field manager", "error", err)
		return
	}
	for {
		var wait <-chan time.Time
		if err := c.syncAll(ctx, fm); err != nil && ctx.Err() == nil {
			slog.Warn("clusterrole aggregation: aggregating cluster roles", "error", err)
			wait = time.After(c.retry)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.cache.ClusterRolesChanged():
		case <-wait:
		}
	}
}

// syncAll brings every aggregated cluster role up to date.
func (c *Controller) syncAll(ctx context.Context, fm *managedfields.FieldManager) error {
	all := c.cache.ClusterRoles()
	var errs []error
	for _, r := range all {
		if r.AggregationRule == nil {
			continue
		}
		rules, err := rbacrules.AggregatedRules(r, all)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if apiequality.Semantic.DeepEqual(rules, r.Rules) {
			continue
		}
		errs = append(errs, c.apply(ctx, fm, r.Name, rules))
	}
	return errors.Join(errs...)
}

// apply sets the rules of the named cluster role by a forced server-side
// apply as Manager.
func (c *Controller) apply(ctx context.Context, fm *managedfields.FieldManager, name string, rules []rbacv1.PolicyRule) error {
	config, err := applyConfiguration(name, rules)
	if err != nil {
		return err
	}
	info := &applied{fm: fm, config: config}
	_, _, err = c.store.Update(ctx, name, info, nil, nil, false, &metav1.UpdateOptions{FieldManager: Manager})
	return err
}

// applyConfiguration is the apply configuration kube's controller sends:
// the name and the rules, each rule with its non-empty fields.
func applyConfiguration(name string, rules []rbacv1.PolicyRule) (*unstructured.Unstructured, error) {
	items := make([]interface{}, 0, len(rules))
	for i := range rules {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&rules[i])
		if err != nil {
			return nil, err
		}
		items = append(items, m)
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": rbacv1.SchemeGroupVersion.String(),
		"kind":       "ClusterRole",
		"metadata":   map[string]interface{}{"name": name},
		"rules":      items,
	}}, nil
}

// applied is the UpdatedObjectInfo of an apply: the configuration merged
// into the current object.
type applied struct {
	fm     *managedfields.FieldManager
	config *unstructured.Unstructured
}

func (a *applied) Preconditions() *metav1.Preconditions { return nil }

func (a *applied) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	return a.fm.Apply(old, a.config.DeepCopy(), Manager, true)
}
