package crd

import (
	"context"
	"errors"
	"fmt"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions/customresource"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// errInstancesRemain: custom resources are still there (deleting
// gracefully, or held by finalizers of their own); the deletion is
// checked again later.
var errInstancesRemain = errors.New("custom resources remain")

// finalize carries out the deletion of a definition, as kube's CRD
// finalizer: no more creates, every custom resource deleted, then the
// customresourcecleanup finalizer removed (which deletes the definition),
// with the Terminating condition saying how far it got.
func (c *Controller) finalize(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if !apiextensionshelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		return nil
	}
	established := apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
	if established && c.served[crd.Name] == nil {
		// Established before this server started: serve it to find its
		// custom resources.
		if err := c.serve(ctx, crd); err != nil {
			return err
		}
	}
	if err := c.setTerminating(crd.Name); err != nil {
		return err
	}
	crd = crd.DeepCopy()
	apiextensionshelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
	})
	crd, err := c.updateStatus(ctx, crd)
	if crd == nil || err != nil {
		return err
	}
	cond := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "NeverEstablished", Message: "resource was never established",
	}
	if established {
		cond, err = deleteInstances(ctx, c.served[crd.Name].served)
		if errors.Is(err, errInstancesRemain) {
			return err
		}
		if err != nil {
			apiextensionshelpers.SetCRDCondition(crd, cond)
			_, _ = c.updateStatus(ctx, crd) // the error that matters is err
			return err
		}
	}
	apiextensionshelpers.SetCRDCondition(crd, cond)
	apiextensionshelpers.CRDRemoveFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer)
	_, err = c.updateStatus(ctx, crd)
	return err
}

// deleteInstances deletes every custom resource of served (in every
// namespace) and returns the Terminating condition to record.
func deleteInstances(ctx context.Context, served *customresource.Served) (apiextensionsv1.CustomResourceDefinitionCondition, error) {
	failed := func(format string, err error) (apiextensionsv1.CustomResourceDefinitionCondition, error) {
		return apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionFailed", Message: fmt.Sprintf(format, err),
		}, err
	}
	all := request.WithNamespace(ctx, "")
	if _, err := served.Store.DeleteCollection(all, nil, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{}); err != nil {
		return failed("could not issue all deletes: %v", err)
	}
	left, err := served.Store.List(all, &metainternalversion.ListOptions{})
	if err != nil {
		return failed("could not list instances: %v", err)
	}
	if len(left.Items) > 0 {
		return apiextensionsv1.CustomResourceDefinitionCondition{}, fmt.Errorf("%w: %d", errInstancesRemain, len(left.Items))
	}
	return apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "InstanceDeletionCompleted", Message: "removed all instances",
	}, nil
}
