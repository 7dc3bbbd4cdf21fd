// Package defaultservicecidr keeps the default ServiceCIDR, "kubernetes",
// as kube-apiserver's controller of that name does: it creates it from the
// service cluster IP range of the flags (as "kube-apiserver"), marks it
// Ready (a forced apply of its status as
// "kubernetes-service-cidr-controller"), and creates it again within its
// interval when it is deleted. A default ServiceCIDR that no longer
// matches the flags is left as it is, and logged once, as kube does.
package defaultservicecidr

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Name is the default ServiceCIDR's.
const Name = "kubernetes"

// controllerName is the field manager of the Ready condition (kube's).
const controllerName = "kubernetes-service-cidr-controller"

// readyMessage is the message of the Ready condition (kube's).
const readyMessage = "Kubernetes default Service CIDR is ready"

var kind = networkingv1.SchemeGroupVersion.WithKind("ServiceCIDR")

// ServiceCIDRs is what the controller needs of the servicecidrs storage.
type ServiceCIDRs interface {
	rest.Getter
	rest.Creater
}

// Controller keeps the default ServiceCIDR.
type Controller struct {
	cidrs   ServiceCIDRs
	creater rest.Creater         // cidrs, recording "kube-apiserver" as manager
	status  *fieldmanager.Writer // servicecidrs/status, as kube's controller
	ranges  []string             // the flags' ranges, primary first

	// interval is kube's: the default ServiceCIDR is checked every 10s.
	interval time.Duration

	reportedMismatch, reportedNotReady bool
}

// New returns the controller of the default ServiceCIDR of ranges, over
// the servicecidrs storage and its status subresource.
func New(cidrs ServiceCIDRs, status rest.Updater, ranges ...netip.Prefix) *Controller {
	c := &Controller{
		cidrs: cidrs, interval: 10 * time.Second,
		creater: fieldmanager.TrackingCreater(cidrs, kind, "kube-apiserver"),
		status:  fieldmanager.NewWriter(status, kind, "status", controllerName),
	}
	for _, r := range ranges {
		c.ranges = append(c.ranges, r.Masked().String())
	}
	return c
}

// Run checks the default ServiceCIDR every interval until ctx ends. Call
// Sync first: the server creates it before it serves.
func (c *Controller) Run(ctx context.Context) {
	queue.Signal(nil).Every(ctx, c.interval, func(bool) {
		if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("default ServiceCIDR", "err", err)
		}
	})
}

// Sync creates the default ServiceCIDR when it is missing, and marks it
// Ready when no Ready condition says otherwise.
func (c *Controller) Sync(ctx context.Context) error {
	ctx = request.WithNamespace(ctx, "")
	obj, err := c.cidrs.Get(ctx, Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		sc := &networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: Name},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: c.ranges},
		}
		obj, err = c.creater.Create(ctx, sc, nil, &metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			obj, err = c.cidrs.Get(ctx, Name, &metav1.GetOptions{})
		}
	}
	if err != nil {
		return err
	}
	return c.syncStatus(ctx, obj.(*networkingv1.ServiceCIDR))
}

func (c *Controller) syncStatus(ctx context.Context, sc *networkingv1.ServiceCIDR) error {
	if sc.DeletionTimestamp != nil {
		return nil
	}
	if !slices.Equal(sc.Spec.CIDRs, c.ranges) {
		if !c.reportedMismatch {
			slog.Warn("the default ServiceCIDR does not match the flags' configuration", "serviceCIDR", sc.Spec.CIDRs, "flags", c.ranges)
			c.reportedMismatch = true
		}
		return nil
	}
	ready := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	switch {
	case ready != nil && ready.Status == metav1.ConditionFalse:
		if !c.reportedNotReady {
			slog.Warn("the default ServiceCIDR is not Ready, though it matches the flags' configuration", "reason", ready.Reason, "message", ready.Message)
			c.reportedNotReady = true
		}
		return nil
	case ready != nil && ready.Status == metav1.ConditionTrue:
		return nil
	}
	_, err := c.status.ForceApply(ctx, &unstructured.Unstructured{Object: readyStatus()})
	return err
}

// readyStatus is the apply configuration kube's controller applies: the
// Ready condition, without a reason.
func readyStatus() map[string]interface{} {
	now, _ := metav1.Now().MarshalQueryParameter()
	return map[string]interface{}{
		"apiVersion": kind.GroupVersion().String(), "kind": kind.Kind,
		"metadata": map[string]interface{}{"name": Name},
		"status": map[string]interface{}{"conditions": []interface{}{map[string]interface{}{
			"type": networkingv1.ServiceCIDRConditionReady, "status": string(metav1.ConditionTrue),
			"message": readyMessage, "lastTransitionTime": now,
		}}},
	}
}
