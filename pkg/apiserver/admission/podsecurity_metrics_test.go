package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics"
	psadmission "k8s.io/pod-security-admission/admission"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"
)

// samples are a registry's pod_security_* series, "name{labels} value".
// Series at zero are left out: kube's recorder creates a few common ones
// ahead (a cache of its own), which this server's counters, ours before
// this plugin's glue was, never did.
func samples(t *testing.T, gather func() ([]*dto.MetricFamily, error)) []string {
	t.Helper()
	families, err := gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "pod_security_") {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetCounter().GetValue() == 0 {
				continue
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out = append(out, fmt.Sprintf("%s{%s} %v", f.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue()))
		}
	}
	sort.Strings(out)
	return out
}

// TestPodSecurityMetricsAsKube: after the requests of
// TestPodSecurityAsKube, our counters hold the series kube's recorder
// holds, with the same labels and counts.
func TestPodSecurityMetricsAsKube(t *testing.T) {
	conf, namespaces := parityFixture(t)
	version := psapi.MajorMinorVersion(1, 37)
	ourRegistry := prometheus.NewRegistry()
	ours, err := NewPodSecurity(PodSecurityConfig{Configuration: conf, Namespaces: namespaces, Pods: podsOf{}, Version: version, Metrics: ourRegistry})
	if err != nil {
		t.Fatal(err)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), &version)
	if err != nil {
		t.Fatal(err)
	}
	recorder := psmetrics.NewPrometheusRecorder(version)
	kubeRegistry := metrics.NewKubeRegistry()
	recorder.MustRegister(kubeRegistry.MustRegister)
	kube := &psadmission.Admission{Configuration: conf, Evaluator: evaluator, Metrics: recorder,
		NamespaceGetter: namespaces, PodLister: podsOf{}}
	if err := kube.CompleteConfiguration(); err != nil {
		t.Fatal(err)
	}
	cases := parityCases()
	future := cases[0]
	future.attrs.Namespace = "future"
	for _, tc := range append(cases, future) {
		attrs := kubeAttributes{a: tc.attrs, obj: tc.obj, user: tc.user}
		kubeAnswer(context.Background(), kube, attrs)
		ourAnswer(context.Background(), ours, attrs)
	}
	want := samples(t, kubeRegistry.Gather)
	got := samples(t, ourRegistry.Gather)
	if len(want) == 0 {
		t.Fatal("kube's recorder recorded nothing")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-kube's +ours):\n%s", diff)
	}
}
