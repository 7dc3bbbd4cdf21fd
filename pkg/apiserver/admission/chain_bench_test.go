package admission

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// passStep validates everything.
type passStep struct{}

func (passStep) Validate(context.Context, handlers.Attributes, runtime.Object) error { return nil }

// BenchmarkChainValidate is the cost of a validating pass over 28 steps
// that do nothing (the default chain's length), with and without the
// latency metrics: what the metrics add to every write.
func BenchmarkChainValidate(b *testing.B) {
	steps := make([]Step, 28)
	for i := range steps {
		steps[i] = Step{Name: "Plugin" + strconv.Itoa(i), Admission: passStep{}}
	}
	a := handlers.Attributes{Operation: handlers.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps")}
	obj := &corev1.ConfigMap{}
	for _, tc := range []struct {
		name    string
		metrics *Metrics
	}{{"no metrics", nil}, {"metrics", NewMetrics(metrics.New())}} {
		chain := Chain{Steps: steps, Metrics: tc.metrics}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := chain.Validate(context.Background(), a, obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
