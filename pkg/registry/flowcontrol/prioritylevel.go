package flowcontrol

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var queuingDocs = flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()

var priorityLevels = generic.Resource{
	Name: "prioritylevelconfigurations", Singular: "prioritylevelconfiguration", Kind: "PriorityLevelConfiguration",
	New: generic.NewOf[flowcontrolv1.PriorityLevelConfiguration], NewList: generic.NewOf[flowcontrolv1.PriorityLevelConfigurationList],
	Strategy: priorityLevelStrategy{},
	StatusStrategy: configStatus(func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		return validatePriorityLevelStatus(&obj.(*flowcontrolv1.PriorityLevelConfiguration).Status, field.NewPath("status"))
	}),
	Table: generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
			{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
			{Name: "Queues", Type: "string", Description: queuingDocs["queues"]},
			{Name: "HandSize", Type: "string", Description: queuingDocs["handSize"]},
			{Name: "QueueLengthLimit", Type: "string", Description: queuingDocs["queueLengthLimit"]},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			pl := obj.(*flowcontrolv1.PriorityLevelConfiguration)
			var shares, queues, handSize, queueLengthLimit interface{} = "<none>", "<none>", "<none>", "<none>"
			if l := pl.Spec.Limited; l != nil {
				shares = int64(ptr.Deref(l.NominalConcurrencyShares, 0))
				if q := l.LimitResponse.Queuing; q != nil {
					queues, handSize, queueLengthLimit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
				}
			}
			return []interface{}{pl.Name, string(pl.Spec.Type), shares, queues, handSize, queueLengthLimit,
				generic.TranslateTimestampSince(pl.CreationTimestamp)}, nil
		},
	},
}

// priorityLevelStrategy is kube's, with its defaults.
type priorityLevelStrategy struct{ configStrategy }

// Default implements rest.Defaulter: kube v1's defaults of the exempt
// and limited configurations and of queuing.
func (priorityLevelStrategy) Default(obj runtime.Object) {
	spec := &obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec
	if e := spec.Exempt; e != nil {
		e.NominalConcurrencyShares = defaultTo(e.NominalConcurrencyShares, 0)
		e.LendablePercent = defaultTo(e.LendablePercent, 0)
	}
	l := spec.Limited
	if l == nil {
		return
	}
	l.NominalConcurrencyShares = defaultTo(l.NominalConcurrencyShares, 30)
	l.LendablePercent = defaultTo(l.LendablePercent, 0)
	if q := l.LimitResponse.Queuing; q != nil {
		for _, f := range []struct {
			v   *int32
			def int32
		}{{&q.HandSize, 8}, {&q.Queues, 64}, {&q.QueueLengthLimit, 50}} {
			if *f.v == 0 {
				*f.v = f.def
			}
		}
	}
}

func defaultTo(p *int32, v int32) *int32 {
	if p == nil {
		return ptr.To(v)
	}
	return p
}

func (priorityLevelStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration), nil)
}

func (priorityLevelStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration))
}
