package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Store is what reconciling needs of a storage of roles or bindings.
type Store interface {
	rest.Getter
	rest.Lister
	rest.Creater
	rest.Updater
	rest.GracefulDeleter
}

// Stores are the storages of the four kinds.
type Stores struct {
	Roles, ClusterRoles, RoleBindings, ClusterRoleBindings Store
}

// manager is the field manager of the writes, as kube-apiserver's
// loopback client leaves them.
const manager = "kube-apiserver"

// Reconcile brings every object of p into storage (see the package doc),
// as the API server itself: a member of system:masters. Each kind is
// listed once (on a fresh cluster, a read per object would double the
// start's work); then objects are reconciled concurrently (a few at a
// time: each is maybe a write to etcd, and they do not depend on each
// other), reading an object again only to retry a conflict. It tries
// every object and returns the errors of those it could not reconcile;
// calling it again retries them.
func Reconcile(ctx context.Context, p *Policy, s Stores) error {
	ctx = request.WithUser(ctx, &user.DefaultInfo{Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}})
	clusterRoles, err := reconcileTasks(ctx, s.ClusterRoles, "ClusterRole", p.ClusterRoles,
		func(t *target, r *rbacv1.ClusterRole) error { return reconcileRole(ctx, t, clusterRole{r}) })
	if err != nil {
		return err
	}
	clusterRoleBindings, err := reconcileTasks(ctx, s.ClusterRoleBindings, "ClusterRoleBinding", p.ClusterRoleBindings,
		func(t *target, b *rbacv1.ClusterRoleBinding) error {
			return reconcileBinding(ctx, t, clusterRoleBinding{b})
		})
	if err != nil {
		return err
	}
	roles, err := reconcileTasks(ctx, s.Roles, "Role", p.Roles,
		func(t *target, r *rbacv1.Role) error { return reconcileRole(ctx, t, role{r}) })
	if err != nil {
		return err
	}
	roleBindings, err := reconcileTasks(ctx, s.RoleBindings, "RoleBinding", p.RoleBindings,
		func(t *target, b *rbacv1.RoleBinding) error { return reconcileBinding(ctx, t, roleBinding{b}) })
	if err != nil {
		return err
	}
	return runAll(slices.Concat(clusterRoles, clusterRoleBindings, roles, roleBindings), 8)
}

// reconcileTasks lists the store of kind once, and returns a task for each
// of objs that reconciles it against that listing.
func reconcileTasks[T any](ctx context.Context, s Store, kind string, objs []T, reconcile func(t *target, obj *T) error) ([]func() error, error) {
	t, err := newTarget(ctx, s, rbacv1.SchemeGroupVersion.WithKind(kind))
	if err != nil {
		return nil, err
	}
	tasks := make([]func() error, len(objs))
	for i := range objs {
		tasks[i] = func() error { return reconcile(t, &objs[i]) }
	}
	return tasks, nil
}

// runAll runs tasks, at most n at a time, and joins their errors.
func runAll(tasks []func() error, n int) error {
	errs := make([]error, len(tasks))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, task := range tasks {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = task()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// target is a store written to as kube-apiserver's loopback client
// writes: each write records an Update by "kube-apiserver" in the
// object's managed fields. listed are its objects when reconciling began,
// by namespace/name.
type target struct {
	Store
	track  rest.TransformFunc
	listed map[string]runtime.Object
	// resource names the kind's resource in errors (the four are plurals
	// in s: roles, clusterrolebindings, ...).
	resource schema.GroupResource
}

func newTarget(ctx context.Context, s Store, kind schema.GroupVersionKind) (*target, error) {
	res, err := s.List(request.WithNamespace(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the %ss: %w", kind.Kind, err)
	}
	listed := make(map[string]runtime.Object, len(res.Items))
	for _, item := range res.Items {
		obj := s.New()
		if err := item.Decode(obj); err != nil {
			return nil, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		listed[m.GetNamespace()+"/"+m.GetName()] = obj
	}
	return &target{Store: s, track: fieldmanager.TrackingUpdate(s, kind, manager), listed: listed,
		resource: rbacv1.Resource(strings.ToLower(kind.Kind) + "s")}, nil
}

// get returns the object of m: as listed on the first attempt (NotFound
// when it was not), read again on later ones.
func (t *target) get(ctx context.Context, m *metav1.ObjectMeta, attempt int) (runtime.Object, error) {
	if attempt > 0 {
		return t.Get(ctx, m.Name, &metav1.GetOptions{})
	}
	if obj, ok := t.listed[m.Namespace+"/"+m.Name]; ok {
		return obj.DeepCopyObject(), nil
	}
	return nil, apierrors.NewNotFound(t.resource, m.Name)
}

func (t *target) create(ctx context.Context, obj runtime.Object) error {
	obj, err := t.track(ctx, obj.DeepCopyObject(), t.New())
	if err != nil {
		return err
	}
	_, err = t.Create(ctx, obj, nil, &metav1.CreateOptions{})
	return err
}

func (t *target) update(ctx context.Context, name string, obj runtime.Object) error {
	info := &rest.DefaultUpdatedObjectInfo{Obj: obj, Transformers: []rest.TransformFunc{t.track}}
	_, _, err := t.Update(ctx, name, info, nil, nil, false, &metav1.UpdateOptions{})
	return err
}

// maxAttempts bounds the retries of one object that races with other
// writers (conflicts, created or deleted meanwhile).
const maxAttempts = 4

func reconcileRole(ctx context.Context, t *target, want ruleOwner) error {
	return withRetries(want.kind(), want.meta(), func(attempt int) (bool, error) {
		return reconcileRoleOnce(request.WithNamespace(ctx, want.meta().Namespace), t, want, attempt)
	})
}

// withRetries runs once, attempt 0, 1, ..., while it asks to be tried
// again (at most maxAttempts times), and names the object in its error.
func withRetries(kind string, m *metav1.ObjectMeta, once func(attempt int) (retry bool, err error)) error {
	var err error
	for attempt := range maxAttempts {
		var retry bool
		if retry, err = once(attempt); !retry {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("reconciling %s %s: %w", kind, qualifiedName(m), err)
	}
	return nil
}

// reconcileRoleOnce reports whether it should be tried again.
func reconcileRoleOnce(ctx context.Context, t *target, want ruleOwner, attempt int) (bool, error) {
	obj, err := t.get(ctx, want.meta(), attempt)
	if apierrors.IsNotFound(err) {
		err = t.create(ctx, want.object())
		return apierrors.IsAlreadyExists(err), err
	}
	if err != nil {
		return false, err
	}
	have := want.from(obj)
	if have.meta().Annotations[rbacv1.AutoUpdateAnnotationKey] == "false" {
		return false, nil
	}
	changed := mergeMeta(have.meta(), want.meta())
	_, missing := validation.Covers(have.rules(), want.rules())
	if len(missing) > 0 {
		have.setRules(append(have.rules(), missing...))
		changed = true
	}
	if mergeAggregation(have, want) {
		changed = true
	}
	if !changed {
		return false, nil
	}
	slog.Debug("rbac bootstrap: updating", "kind", want.kind(), "name", qualifiedName(want.meta()), "missingRules", len(missing))
	err = t.update(ctx, have.meta().Name, have.object())
	return apierrors.IsConflict(err) || apierrors.IsNotFound(err), err
}

// mergeAggregation adds the selectors of want's aggregation rule that have
// lacks, or removes have's rule when want has none (kube's reconciler).
func mergeAggregation(have, want ruleOwner) bool {
	haveRule, wantRule := have.aggregationRule(), want.aggregationRule()
	if wantRule == nil {
		if haveRule != nil {
			have.setAggregationRule(nil)
			return true
		}
		return false
	}
	var missing []metav1.LabelSelector
	for _, sel := range wantRule.ClusterRoleSelectors {
		found := false
		if haveRule != nil {
			for _, h := range haveRule.ClusterRoleSelectors {
				if apiequality.Semantic.DeepEqual(h, sel) {
					found = true
					break
				}
			}
		}
		if !found {
			missing = append(missing, sel)
		}
	}
	if len(missing) == 0 {
		return false
	}
	merged := &rbacv1.AggregationRule{}
	if haveRule != nil {
		merged.ClusterRoleSelectors = append(merged.ClusterRoleSelectors, haveRule.ClusterRoleSelectors...)
	}
	merged.ClusterRoleSelectors = append(merged.ClusterRoleSelectors, missing...)
	have.setAggregationRule(merged)
	return true
}

func reconcileBinding(ctx context.Context, t *target, want bindingOwner) error {
	return withRetries(want.kind(), want.meta(), func(attempt int) (bool, error) {
		return reconcileBindingOnce(request.WithNamespace(ctx, want.meta().Namespace), t, want, attempt)
	})
}

// reconcileBindingOnce reports whether it should be tried again. A
// binding to another role is replaced (its roleRef cannot change).
func reconcileBindingOnce(ctx context.Context, t *target, want bindingOwner, attempt int) (bool, error) {
	obj, err := t.get(ctx, want.meta(), attempt)
	if apierrors.IsNotFound(err) {
		err = t.create(ctx, want.object())
		return apierrors.IsAlreadyExists(err), err
	}
	if err != nil {
		return false, err
	}
	have := want.from(obj)
	if have.meta().Annotations[rbacv1.AutoUpdateAnnotationKey] == "false" {
		return false, nil
	}
	if have.roleRef() != want.roleRef() {
		uid := have.meta().UID
		_, _, err := t.Delete(ctx, have.meta().Name, nil, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return apierrors.IsConflict(err), err
		}
		err = t.create(ctx, want.object())
		return apierrors.IsAlreadyExists(err), err
	}
	changed := mergeMeta(have.meta(), want.meta())
	var missing []rbacv1.Subject
	for _, sub := range want.subjects() {
		if !containsSubject(have.subjects(), sub) && !containsSubject(missing, sub) {
			missing = append(missing, sub)
		}
	}
	if len(missing) > 0 {
		have.setSubjects(append(have.subjects(), missing...))
		changed = true
	}
	if !changed {
		return false, nil
	}
	err = t.update(ctx, have.meta().Name, have.object())
	return apierrors.IsConflict(err) || apierrors.IsNotFound(err), err
}

func containsSubject(list []rbacv1.Subject, s rbacv1.Subject) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// mergeMeta adds want's labels and annotations that have lacks (have's
// values win), and reports whether have changed.
func mergeMeta(have, want *metav1.ObjectMeta) bool {
	labels, annotations := merge(want.Labels, have.Labels), merge(want.Annotations, have.Annotations)
	changed := !reflect.DeepEqual(labels, have.Labels) || !reflect.DeepEqual(annotations, have.Annotations)
	have.Labels, have.Annotations = labels, annotations
	return changed
}

// merge combines maps, the later ones winning; nil when all are nil.
func merge(ms ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range ms {
		if m != nil && out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, m)
	}
	return out
}

func qualifiedName(m *metav1.ObjectMeta) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}
