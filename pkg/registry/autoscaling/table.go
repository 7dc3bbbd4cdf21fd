package autoscaling

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var (
	hpaSpecDocs   = autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	hpaStatusDocs = autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()
)

// hpaTable is kube's printer of autoscalers. kube prints every version
// from its internal type, so v1 prints the same (its objects converted).
var hpaTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Reference", Type: "string", Description: hpaSpecDocs["scaleTargetRef"]},
	{Name: "Targets", Type: "string", Description: hpaSpecDocs["metrics"]},
	{Name: "MinPods", Type: "string", Description: hpaSpecDocs["minReplicas"]},
	{Name: "MaxPods", Type: "string", Description: hpaSpecDocs["maxReplicas"]},
	{Name: "Replicas", Type: "string", Description: hpaStatusDocs["currentReplicas"]},
	generic.AgeColumn,
}, func(h *autoscalingv2.HorizontalPodAutoscaler) ([]interface{}, error) {
	minPods := "<unset>"
	if h.Spec.MinReplicas != nil {
		minPods = fmt.Sprint(*h.Spec.MinReplicas)
	}
	return []interface{}{h.Name, h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name,
		formatMetrics(h.Spec.Metrics, h.Status.CurrentMetrics), minPods, int64(h.Spec.MaxReplicas),
		int64(h.Status.CurrentReplicas), generic.TranslateTimestampSince(h.CreationTimestamp)}, nil
})

// formatMetrics prints the first two targets as "current/target" (the
// current value is the status metric at the same index), and how many
// more there are.
func formatMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const shown = 2
	var list []string
	for i := range specs {
		var status *autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = &statuses[i]
		}
		list = append(list, formatMetric(&specs[i], status))
	}
	if len(list) > shown {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:shown], ", "), len(list)-shown)
	}
	return strings.Join(list, ", ")
}

func formatMetric(spec *autoscalingv2.MetricSpec, status *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	current := unknown
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External.Target.AverageValue != nil {
			if status != nil && status.External != nil && status.External.Current.AverageValue != nil {
				current = status.External.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String())
		}
		if status != nil && status.External != nil {
			current = status.External.Current.Value.String()
		}
		return current + "/" + spec.External.Target.Value.String()
	case autoscalingv2.PodsMetricSourceType:
		if status != nil && status.Pods != nil {
			current = status.Pods.Current.AverageValue.String()
		}
		return current + "/" + spec.Pods.Target.AverageValue.String()
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object.Target.AverageValue != nil {
			if status != nil && status.Object != nil && status.Object.Current.AverageValue != nil {
				current = status.Object.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String())
		}
		if status != nil && status.Object != nil {
			current = status.Object.Current.Value.String()
		}
		return current + "/" + spec.Object.Target.Value.String()
	case autoscalingv2.ResourceMetricSourceType:
		var cur *autoscalingv2.MetricValueStatus
		if status != nil && status.Resource != nil {
			cur = &status.Resource.Current
		}
		return formatResourceMetric(string(spec.Resource.Name), spec.Resource.Target, cur)
	case autoscalingv2.ContainerResourceMetricSourceType:
		var cur *autoscalingv2.MetricValueStatus
		if status != nil && status.ContainerResource != nil {
			cur = &status.ContainerResource.Current
		}
		return formatResourceMetric(string(spec.ContainerResource.Name), spec.ContainerResource.Target, cur)
	}
	return "<unknown type>"
}

// formatResourceMetric prints "name: current/target", as a value or a
// utilization.
func formatResourceMetric(name string, target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	cur := "<unknown>"
	if target.AverageValue != nil {
		if current != nil {
			cur = current.AverageValue.String()
		}
		return fmt.Sprintf("%s: %s/%s", name, cur, target.AverageValue.String())
	}
	if current != nil && current.AverageUtilization != nil {
		cur = fmt.Sprintf("%d%%", *current.AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, cur, want)
}
