package conversion

import (
	"encoding/json"
	"maps"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// v1 -> v2, kube's rules (pkg/apis/autoscaling/v1/conversion.go) one by
// one. Expected objects are the spec and status kube stores (read at v2)
// for such a v1 object.
func TestHPAV1ToV2(t *testing.T) {
	t.Parallel()
	const ref = `"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"}`
	cases := []struct {
		name, in, want string
	}{{
		name: "no metrics: 80 % CPU",
		in:   `{"spec":{` + ref + `,"maxReplicas":3}}`,
		want: `{"metadata":{},"spec":{` + ref + `,"maxReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]},"status":{"desiredReplicas":0,"currentMetrics":null}}`,
	}, {
		name: "CPU target and current CPU",
		in:   `{"spec":{` + ref + `,"maxReplicas":3,"targetCPUUtilizationPercentage":50},"status":{"currentReplicas":2,"desiredReplicas":3,"currentCPUUtilizationPercentage":77}}`,
		want: `{"metadata":{},"spec":{` + ref + `,"maxReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]},"status":{"currentReplicas":2,"desiredReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":77}}}]}}`,
	}, {
		name: "metrics annotation before the CPU target, other annotations kept",
		in: `{"metadata":{"annotations":{"keep":"me","autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"Resource\",\"resource\":{\"name\":\"memory\",\"targetAverageValue\":\"100Mi\"}},{\"type\":\"Object\",\"object\":{\"target\":{\"kind\":\"Ingress\",\"name\":\"main\"},\"metricName\":\"m\",\"targetValue\":\"0\",\"averageValue\":\"3\"}}]"}},` +
			`"spec":{` + ref + `,"maxReplicas":3,"targetCPUUtilizationPercentage":70}}`,
		want: `{"metadata":{"annotations":{"keep":"me"}},"spec":{` + ref + `,"maxReplicas":3,"metrics":[` +
			`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"100Mi"}}},` +
			`{"type":"Object","object":{"describedObject":{"kind":"Ingress","name":"main"},"target":{"type":"AverageValue","averageValue":"3"},"metric":{"name":"m"}}},` +
			`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":70}}}]},"status":{"desiredReplicas":0,"currentMetrics":null}}`,
	}, {
		name: "behavior annotation in kube's internal encoding, names in any case",
		in: `{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/behavior":"{\"scaleDown\":{\"StabilizationWindowSeconds\":60,\"policies\":[{\"type\":\"Pods\",\"value\":1,\"periodSeconds\":30}],\"Tolerance\":\"50m\"},\"ScaleUp\":null}"}},` +
			`"spec":{` + ref + `,"maxReplicas":3}}`,
		want: `{"metadata":{},"spec":{` + ref + `,"maxReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}],` +
			`"behavior":{"scaleDown":{"stabilizationWindowSeconds":60,"policies":[{"type":"Pods","value":1,"periodSeconds":30}],"tolerance":"50m"}}},"status":{"desiredReplicas":0,"currentMetrics":null}}`,
	}, {
		name: "empty behavior and broken annotations are ignored, and dropped",
		in: `{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/behavior":"{}","autoscaling.alpha.kubernetes.io/metrics":"[{","autoscaling.alpha.kubernetes.io/conditions":"nope","autoscaling.alpha.kubernetes.io/scale-up-tolerance":"1"}},` +
			`"spec":{` + ref + `,"maxReplicas":3,"targetCPUUtilizationPercentage":40}}`,
		want: `{"metadata":{},"spec":{` + ref + `,"maxReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":40}}}]},"status":{"desiredReplicas":0,"currentMetrics":null}}`,
	}, {
		name: "current metrics and conditions annotations win over the status fields",
		in: `{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/current-metrics":"[{\"type\":\"External\",\"external\":{\"metricName\":\"q\",\"currentValue\":\"5\"}}]",` +
			`"autoscaling.alpha.kubernetes.io/conditions":"[{\"type\":\"AbleToScale\",\"status\":\"True\",\"lastTransitionTime\":null,\"reason\":\"R\"}]"}},` +
			`"spec":{` + ref + `,"maxReplicas":3,"targetCPUUtilizationPercentage":40},"status":{"desiredReplicas":1,"currentCPUUtilizationPercentage":10}}`,
		want: `{"metadata":{},"spec":{` + ref + `,"maxReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":40}}}]},` +
			`"status":{"desiredReplicas":1,"currentMetrics":[{"type":"External","external":{"metric":{"name":"q"},"current":{"value":"5"}}}],"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":null,"reason":"R"}]}}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := &autoscalingv1.HorizontalPodAutoscaler{}
			if err := json.Unmarshal([]byte(tc.in), in); err != nil {
				t.Fatal(err)
			}
			before := maps.Clone(in.Annotations)
			out := &autoscalingv2.HorizontalPodAutoscaler{}
			if err := hpaV1ToV2(in, out); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(out)
			if string(got) != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
			if !maps.Equal(in.Annotations, before) {
				t.Errorf("the input's annotations changed: %v", in.Annotations)
			}
		})
	}
}

// A v2 object never keeps round-trip annotations of an older v1 write:
// those of its own state replace them, and the input is left alone.
func TestHPAV2ToV1ReplacesStaleAnnotations(t *testing.T) {
	t.Parallel()
	in := &autoscalingv2.HorizontalPodAutoscaler{}
	in.Annotations = map[string]string{"keep": "me", hpaMetricsAnnotation: "stale", hpaConditionsAnnotation: "stale"}
	in.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(60), cpuUtilizationMetric(70)}
	out := &autoscalingv1.HorizontalPodAutoscaler{}
	if err := hpaV2ToV1(in, out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"keep": "me"}
	if !maps.Equal(out.Annotations, want) {
		t.Errorf("annotations: got %v, want %v (every CPU utilization target is the v1 field's)", out.Annotations, want)
	}
	if got := out.Spec.TargetCPUUtilizationPercentage; got == nil || *got != 60 {
		t.Errorf("targetCPUUtilizationPercentage: got %v, want the first, 60", got)
	}
	if len(in.Annotations) != 3 {
		t.Errorf("the input's annotations changed: %v", in.Annotations)
	}
}
