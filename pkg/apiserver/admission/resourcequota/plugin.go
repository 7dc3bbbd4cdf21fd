// Package resourcequota is kube's ResourceQuota admission plugin: a
// create or update in a namespace with ResourceQuotas is measured with
// kube's rules (pkg/quota), refused when it would go over a quota, and
// otherwise charged to the quotas' status.used before it is stored.
//
// It sits in the HTTP layer's admission chain (pkg/apiserver/admission)
// and reads and writes the quotas through their registry storage, the
// reads from the watch cache.
package resourcequota

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	resourcequotaapi "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	quotav1 "k8s.io/apiserver/pkg/quota/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/quota"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// PluginName is the plugin's kube name.
const PluginName = "ResourceQuota"

// evaluationTimeout bounds the wait for a namespace's earlier requests,
// as kube's plugin bounds the wait for its workers.
const evaluationTimeout = 10 * time.Second

// retries is how many times a conflicting status update is evaluated
// again on the quota as it now is (kube's number).
const retries = 3

// Config is what the plugin reads and writes.
type Config struct {
	// Quotas lists the namespace's ResourceQuotas (the resourcequotas
	// storage).
	Quotas rest.Lister
	// Status updates a quota's status (the resourcequotas/status
	// storage).
	Status rest.Updater
	// Configuration is the plugin's ResourceQuotaConfiguration from
	// --admission-control-config-file; nil limits nothing by default.
	Configuration *resourcequotaapi.Configuration
}

// ResourceQuota is the plugin. Requests in one namespace are evaluated
// one at a time (kube batches them per namespace the same way), so that
// each sees what the one before charged; the status update's
// resourceVersion guards against other writers (another replica, the
// controller that recounts).
type ResourceQuota struct {
	accessor *accessor
	registry *quota.Registry
	limited  []resourcequotaapi.LimitedResource
	locks    namespaceLocks
}

// New returns the plugin.
func New(cfg Config) *ResourceQuota {
	p := &ResourceQuota{accessor: newAccessor(cfg.Quotas, cfg.Status), registry: quota.NewRegistry(nil)}
	if cfg.Configuration != nil {
		p.limited = cfg.Configuration.LimitedResources
	}
	return p
}

// Validate implements handlers.Admission: creates and updates of
// namespaced objects (not namespaces) are checked, deletes never (the
// controller gives back what they free).
func (p *ResourceQuota) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Namespace == "" || (a.Operation != handlers.Create && a.Operation != handlers.Update) {
		return nil
	}
	if a.Kind.Group == "" && a.Kind.Kind == "Namespace" {
		return nil
	}
	evaluator := p.registry.Get(a.Resource.GroupResource())
	if evaluator == nil {
		return nil
	}
	attrs := admission.NewAttributesRecord(obj, a.Old, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		admission.Operation(a.Operation), a.Options, a.DryRun, nil)
	if !evaluator.Handles(attrs) {
		return nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, evaluationTimeout)
	defer cancel()
	unlock, err := p.locks.lock(waitCtx, a.Namespace)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return apierrors.NewInternalError(fmt.Errorf("resource quota evaluation timed out"))
	}
	defer unlock()
	return p.evaluate(ctx, attrs, evaluator)
}

// evaluate is kube's checkQuotas for one request: check it against the
// quotas, write the quotas it changes, and on a conflict check again
// those that failed, as they now are.
func (p *ResourceQuota) evaluate(ctx context.Context, a admission.Attributes, evaluator quotav1.Evaluator) error {
	quotas, err := p.accessor.quotas(ctx, a.GetNamespace(), false)
	if err != nil {
		return err
	}
	if len(quotas) == 0 && len(p.limited) == 0 {
		return nil
	}
	for remaining := retries; ; remaining-- {
		charged, err := quota.CheckRequest(quotas, a, evaluator, p.limited)
		if err != nil || a.IsDryRun() {
			return err
		}
		failed, lastErr := p.write(ctx, quotas, charged)
		if len(failed) == 0 {
			return nil
		}
		if remaining <= 0 || !apierrors.IsConflict(lastErr) {
			return lastErr
		}
		fresh, err := p.accessor.quotas(ctx, a.GetNamespace(), true)
		if err != nil {
			return lastErr
		}
		quotas = quotas[:0]
		for _, q := range fresh {
			if failed[q.Name] {
				quotas = append(quotas, q)
			}
		}
	}
}

// write updates the status of each quota whose used changed from before
// to after; it returns the names of those that failed and the last error.
func (p *ResourceQuota) write(ctx context.Context, before, after []corev1.ResourceQuota) (map[string]bool, error) {
	var failed map[string]bool
	var lastErr error
	for i := range after {
		if quotav1.Equals(before[i].Status.Used, after[i].Status.Used) {
			continue
		}
		if err := p.accessor.updateStatus(ctx, &after[i]); err != nil {
			if failed == nil {
				failed = map[string]bool{}
			}
			failed[after[i].Name] = true
			lastErr = err
		}
	}
	return failed, lastErr
}
