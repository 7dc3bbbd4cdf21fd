package autoscaling

import (
	"encoding/json"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// The TARGETS column of each kind of metric, as kube-apiserver v1.37.2
// printed it for autoscalers with these metrics and statuses (recorded):
// the current value of the status metric at the same index, "<unknown>"
// without one, the first two, and how many more.
func TestFormatMetrics(t *testing.T) {
	t.Parallel()
	metric := map[string]string{
		"ext-avg":   `{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"AverageValue","averageValue":"30"}}}`,
		"ext-val":   `{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"30"}}}`,
		"pods":      `{"type":"Pods","pods":{"metric":{"name":"p"},"target":{"type":"AverageValue","averageValue":"1k"}}}`,
		"obj-avg":   `{"type":"Object","object":{"metric":{"name":"r"},"target":{"type":"AverageValue","averageValue":"3"}}}`,
		"obj-val":   `{"type":"Object","object":{"metric":{"name":"r"},"target":{"type":"Value","value":"10k"}}}`,
		"res-val":   `{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"100Mi"}}}`,
		"res-util":  `{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}`,
		"cres-val":  `{"type":"ContainerResource","containerResource":{"name":"memory","container":"c","target":{"type":"AverageValue","averageValue":"100Mi"}}}`,
		"cres-util": `{"type":"ContainerResource","containerResource":{"name":"cpu","container":"c","target":{"type":"Utilization","averageUtilization":70}}}`,
	}
	status := map[string]string{
		"ext-avg":   `{"type":"External","external":{"metric":{"name":"q"},"current":{"averageValue":"20"}}}`,
		"ext-val":   `{"type":"External","external":{"metric":{"name":"q"},"current":{"value":"25"}}}`,
		"pods":      `{"type":"Pods","pods":{"metric":{"name":"p"},"current":{"averageValue":"900"}}}`,
		"obj-avg":   `{"type":"Object","object":{"metric":{"name":"r"},"current":{"averageValue":"2"}}}`,
		"obj-val":   `{"type":"Object","object":{"metric":{"name":"r"},"current":{"value":"9k"}}}`,
		"res-val":   `{"type":"Resource","resource":{"name":"memory","current":{"averageValue":"90Mi"}}}`,
		"res-util":  `{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":55,"averageValue":"200m"}}}`,
		"cres-val":  `{"type":"ContainerResource","containerResource":{"name":"memory","container":"c","current":{"averageValue":"80Mi"}}}`,
		"cres-util": `{"type":"ContainerResource","containerResource":{"name":"cpu","container":"c","current":{"averageUtilization":65}}}`,
	}
	for _, tc := range []struct {
		metrics  []string
		statuses bool
		want     string
	}{
		{[]string{"cres-util", "ext-avg"}, true, "cpu: 65%/70%, 20/30 (avg)"},
		{[]string{"cres-val", "cres-util"}, false, "memory: <unknown>/100Mi, cpu: <unknown>/70%"},
		{[]string{"ext-avg", "ext-val"}, true, "20/30 (avg), 25/30"},
		{[]string{"ext-val", "pods"}, false, "<unknown>/30, <unknown>/1k"},
		{[]string{"obj-avg", "obj-val"}, false, "<unknown>/3 (avg), <unknown>/10k"},
		{[]string{"obj-val", "res-val"}, true, "9k/10k, memory: 90Mi/100Mi"},
		{[]string{"pods", "obj-avg"}, true, "900/1k, 2/3 (avg)"},
		{[]string{"res-util", "cres-val"}, true, "cpu: 55%/60%, memory: 80Mi/100Mi"},
		{[]string{"res-val", "res-util"}, false, "memory: <unknown>/100Mi, cpu: <unknown>/60%"},
		{[]string{"pods", "res-val", "ext-val"}, false, "<unknown>/1k, memory: <unknown>/100Mi + 1 more..."},
		{nil, false, "<none>"},
	} {
		var specs []autoscalingv2.MetricSpec
		var statuses []autoscalingv2.MetricStatus
		for _, m := range tc.metrics {
			var s autoscalingv2.MetricSpec
			mustUnmarshal(t, metric[m], &s)
			specs = append(specs, s)
			if tc.statuses {
				var st autoscalingv2.MetricStatus
				mustUnmarshal(t, status[m], &st)
				statuses = append(statuses, st)
			}
		}
		if got := formatMetrics(specs, statuses); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.metrics, got, tc.want)
		}
	}
}

func mustUnmarshal(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatal(err)
	}
}

// kube's v2 defaults: a behavior with a rule gets every unset field of
// both directions' rules (no scale-down window: the controller's flag
// decides it); no behavior stays none.
func TestDefaults(t *testing.T) {
	t.Parallel()
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	mustUnmarshal(t, `{"spec":{"maxReplicas":3,"behavior":{"scaleDown":{"stabilizationWindowSeconds":60,"tolerance":"50m"}}}}`, h)
	hpaStrategy{}.Default(h)
	got, _ := json.Marshal(h.Spec)
	const want = `{"scaleTargetRef":{"kind":"","name":""},"minReplicas":1,"maxReplicas":3,` +
		`"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}],` +
		`"behavior":{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},` +
		`"scaleDown":{"stabilizationWindowSeconds":60,"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}],"tolerance":"50m"}}}`
	if string(got) != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}
	none := &autoscalingv2.HorizontalPodAutoscaler{}
	hpaStrategy{}.Default(none)
	if none.Spec.Behavior != nil {
		t.Errorf("a behavior appeared: %+v", none.Spec.Behavior)
	}
}
