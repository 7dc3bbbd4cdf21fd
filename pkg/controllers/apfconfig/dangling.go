package apfconfig

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// keepDangling sets the Dangling condition of every flow schema whose
// condition is not what it should be, whenever the configuration changes
// (and every Retry while a write failed).
func (c *Controller) keepDangling(ctx context.Context) {
	for c.wake.Wait(ctx) {
		if err := c.syncDangling(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("flow control: the Dangling condition of flow schemas", "error", err)
			time.AfterFunc(c.cfg.Retry, c.wake.Notify)
		}
	}
}

func (c *Controller) syncDangling(ctx context.Context) error {
	pls, err := list[*flowcontrolv1.PriorityLevelConfiguration](ctx, c.cfg.PriorityLevels)
	if err != nil {
		return err
	}
	levels := make(map[string]bool, len(pls))
	for _, pl := range pls {
		levels[pl.Name] = true
	}
	fss, err := list[*flowcontrolv1.FlowSchema](ctx, c.cfg.FlowSchemas)
	if err != nil {
		return err
	}
	for _, fs := range fss {
		want := danglingCondition(fs.Spec.PriorityLevelConfiguration.Name, levels[fs.Spec.PriorityLevelConfiguration.Name])
		if have := conditionOf(fs, flowcontrolv1.FlowSchemaConditionDangling); have != nil &&
			have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
			continue
		}
		if _, err := c.statusWriter.ForceApply(ctx, danglingApply(fs.Name, want)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("flow schema %s: %w", fs.Name, err)
		}
	}
	return nil
}

// danglingCondition is kube's condition for a flow schema naming the
// priority level plName, which exists or not.
func danglingCondition(plName string, exists bool) flowcontrolv1.FlowSchemaCondition {
	c := flowcontrolv1.FlowSchemaCondition{
		Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found",
		Message:            fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", plName),
		LastTransitionTime: metav1.Now(),
	}
	if !exists {
		c.Status, c.Reason = flowcontrolv1.ConditionTrue, "NotFound"
		c.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", plName)
	}
	return c
}

func conditionOf(fs *flowcontrolv1.FlowSchema, t flowcontrolv1.FlowSchemaConditionType) *flowcontrolv1.FlowSchemaCondition {
	for i := range fs.Status.Conditions {
		if fs.Status.Conditions[i].Type == t {
			return &fs.Status.Conditions[i]
		}
	}
	return nil
}

// danglingApply is the apply configuration kube's flow control sends to
// flowschemas/status: the one condition it owns.
func danglingApply(name string, c flowcontrolv1.FlowSchemaCondition) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": flowcontrolv1.SchemeGroupVersion.String(),
		"kind":       "FlowSchema",
		"metadata":   map[string]any{"name": name},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": string(c.Type), "status": string(c.Status), "reason": c.Reason, "message": c.Message,
			"lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339),
		}}},
	}}
}
