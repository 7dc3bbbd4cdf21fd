package availability

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// sync checks the APIService name and writes its condition when it
// changed. An error (a failed check, a failed write) has it synced again
// after a backoff.
func (c *Controller) sync(ctx context.Context, name string) error {
	c.mu.Lock()
	s := c.known[name]
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	if s.Spec.Service == nil {
		// kube's local availability controller: always available.
		return c.writeCondition(ctx, s, apiregistrationv1.APIServiceCondition{
			Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
			Reason: "Local", Message: "Local APIServices are always available",
		})
	}
	cond, list, checkErr := c.check(ctx, s)
	if cond == nil {
		return checkErr // the condition is left as it is
	}
	passed := cond.Status == apiregistrationv1.ConditionTrue
	var v2, v3 []byte
	if passed {
		var err error
		if v2, v3, err = c.cfg.Checker.OpenAPI(ctx, s); err != nil {
			slog.Debug("availability: fetching the OpenAPI of an APIService", "name", s.Name, "error", err)
		}
	}
	c.recordDiscovery(s, passed, list, v2, v3)
	if err := c.writeCondition(ctx, s, *cond); err != nil {
		return err
	}
	return checkErr
}

// check is kube's remote availability check of s: the condition to
// write, the discovery document its server answered (on success), and
// the error of a failed discovery check (retried with a backoff). A nil
// condition means "leave it" (the error says why).
func (c *Controller) check(ctx context.Context, s *apiregistrationv1.APIService) (*apiregistrationv1.APIServiceCondition, *metav1.APIResourceList, error) {
	ref := s.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	unavailable := func(status apiregistrationv1.ConditionStatus, reason, format string, args ...any) *apiregistrationv1.APIServiceCondition {
		return &apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: status,
			Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	obj, err := c.cfg.Services.Get(request.WithNamespace(ctx, ref.Namespace), ref.Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return unavailable(apiregistrationv1.ConditionFalse, "ServiceNotFound", "service/%s in %q is not present", ref.Name, ref.Namespace), nil, nil
	} else if err != nil {
		return unavailable(apiregistrationv1.ConditionUnknown, "ServiceAccessError",
			"service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err), nil, nil
	}
	// Only a ClusterIP service's endpoints are checked, as in kube.
	if svc := obj.(*corev1.Service); svc.Spec.Type == corev1.ServiceTypeClusterIP {
		portName, found := "", false
		for _, p := range svc.Spec.Ports {
			if p.Port == port {
				portName, found = p.Name, true
				break
			}
		}
		if !found {
			return unavailable(apiregistrationv1.ConditionFalse, "ServicePortError",
				"service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port), nil, nil
		}
		slices, err := c.endpointSlices(ctx, ref.Namespace, ref.Name)
		if err != nil {
			return unavailable(apiregistrationv1.ConditionUnknown, "EndpointsAccessError",
				"service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err), nil, nil
		}
		if len(slices) == 0 {
			return unavailable(apiregistrationv1.ConditionFalse, "EndpointsNotFound",
				"cannot find endpointslices for service/%s in %q", ref.Name, ref.Namespace), nil, nil
		}
		if !hasReadyEndpoint(portName, slices) {
			return unavailable(apiregistrationv1.ConditionFalse, "MissingEndpoints",
				"endpointslices for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName), nil, nil
		}
	}
	if err := c.cfg.Checker.CanCheck(s); err != nil {
		return nil, nil, err
	}
	list, err := c.cfg.Checker.Check(ctx, s)
	if err != nil {
		return unavailable(apiregistrationv1.ConditionFalse, "FailedDiscoveryCheck", "%s", err.Error()), nil, err
	}
	return &apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
		Reason: "Passed", Message: "all checks passed"}, list, nil
}

// endpointSlices are the service's slices (none without an EndpointSlices
// store); their order does not matter to hasReadyEndpoint.
func (c *Controller) endpointSlices(ctx context.Context, namespace, service string) ([]discoveryv1.EndpointSlice, error) {
	if c.cfg.EndpointSlices == nil {
		return nil, nil
	}
	return endpointslice.ServiceSlices(request.WithNamespace(ctx, namespace), c.cfg.EndpointSlices, service, "")
}

// hasReadyEndpoint: a slice with a ready endpoint serves the named port.
func hasReadyEndpoint(portName string, slices []discoveryv1.EndpointSlice) bool {
	for _, s := range slices {
		ready := false
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready = true
				break
			}
		}
		if !ready {
			continue
		}
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == portName && p.Port != nil {
				return true
			}
		}
	}
	return false
}

// recordDiscovery keeps what the check fetched of s's group version:
// the resources of a passed check that answered a document, and the
// OpenAPI documents fetched; otherwise those last known, stale. A change
// is published.
func (c *Controller) recordDiscovery(s *apiregistrationv1.APIService, passed bool, list *metav1.APIResourceList, v2, v3 []byte) {
	c.mu.Lock()
	old := c.fetched[s.Name]
	next := old
	next.Stale = true
	if passed && list != nil {
		next.Resources, next.Stale = list.APIResources, false
		if next.Resources == nil {
			next.Resources = []metav1.APIResource{}
		}
	}
	if v2 != nil {
		next.OpenAPIV2 = v2
	}
	if v3 != nil {
		next.OpenAPIV3 = v3
	}
	changed := old.Stale != next.Stale || !apiequality.Semantic.DeepEqual(old.Resources, next.Resources) ||
		!bytes.Equal(old.OpenAPIV2, next.OpenAPIV2) || !bytes.Equal(old.OpenAPIV3, next.OpenAPIV3)
	if c.known[s.Name] != nil {
		c.fetched[s.Name] = next
	}
	c.mu.Unlock()
	if changed {
		c.publish()
	}
}

// writeCondition sets cond on s as kube's helper does (the transition
// time changes with the status only) and writes the status when it
// changed.
func (c *Controller) writeCondition(ctx context.Context, s *apiregistrationv1.APIService, cond apiregistrationv1.APIServiceCondition) error {
	updated := s.DeepCopy()
	cond.LastTransitionTime = metav1.Now()
	setCondition(&updated.Status, cond)
	if apiequality.Semantic.DeepEqual(s.Status, updated.Status) {
		return nil
	}
	_, err := c.writer.Update(ctx, updated)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	return err
}

func setCondition(status *apiregistrationv1.APIServiceStatus, cond apiregistrationv1.APIServiceCondition) {
	for i := range status.Conditions {
		existing := &status.Conditions[i]
		if existing.Type != cond.Type {
			continue
		}
		if existing.Status != cond.Status {
			existing.Status, existing.LastTransitionTime = cond.Status, cond.LastTransitionTime
		}
		existing.Reason, existing.Message = cond.Reason, cond.Message
		return
	}
	status.Conditions = append(status.Conditions, cond)
}
