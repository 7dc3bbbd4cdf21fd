package flowcontrol

import (
	"context"
	"sort"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var flowSchemas = generic.Resource{
	Name: "flowschemas", Singular: "flowschema", Kind: "FlowSchema",
	New: generic.NewOf[flowcontrolv1.FlowSchema], NewList: generic.NewOf[flowcontrolv1.FlowSchemaList],
	Strategy: flowSchemaStrategy{},
	StatusStrategy: configStatus(func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		return validateFlowSchemaStatus(&obj.(*flowcontrolv1.FlowSchema).Status, field.NewPath("status"))
	}),
	Table: flowSchemaTable{flowSchemaPrinter},
}

var flowSchemaPrinter = generic.TablePrinter{
	Columns: []metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
		{Name: "MatchingPrecedence", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]},
		{Name: "DistinguisherMethod", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]},
		generic.AgeColumn,
		{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
	},
	Cells: func(obj runtime.Object) ([]interface{}, error) {
		fs := obj.(*flowcontrolv1.FlowSchema)
		method := "<none>"
		if fs.Spec.DistinguisherMethod != nil {
			method = string(fs.Spec.DistinguisherMethod.Type)
		}
		missing := "?"
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				missing = string(c.Status)
				break
			}
		}
		return []interface{}{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method,
			generic.TranslateTimestampSince(fs.CreationTimestamp), missing}, nil
	},
}

// flowSchemaTable prints a list of flow schemas in the order they match
// requests, as kubectl get shows them: by matching precedence, then name.
type flowSchemaTable struct{ generic.TablePrinter }

func (t flowSchemaTable) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	if list, ok := obj.(*flowcontrolv1.FlowSchemaList); ok {
		sorted := *list
		sorted.Items = append([]flowcontrolv1.FlowSchema(nil), list.Items...)
		sort.SliceStable(sorted.Items, func(i, j int) bool {
			a, b := &sorted.Items[i], &sorted.Items[j]
			if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
				return a.Spec.MatchingPrecedence < b.Spec.MatchingPrecedence
			}
			return a.Name < b.Name
		})
		obj = &sorted
	}
	return t.TablePrinter.ConvertToTable(ctx, obj, tableOptions)
}

var _ rest.TableConvertor = flowSchemaTable{}

// flowSchemaStrategy is kube's: matching precedence 1000 by default.
type flowSchemaStrategy struct{ configStrategy }

// Default implements rest.Defaulter.
func (flowSchemaStrategy) Default(obj runtime.Object) {
	fs := obj.(*flowcontrolv1.FlowSchema)
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = 1000
	}
}

func (flowSchemaStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateFlowSchema(obj.(*flowcontrolv1.FlowSchema))
}

func (flowSchemaStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validateFlowSchema(obj.(*flowcontrolv1.FlowSchema))
}

// configStrategy is what kube's strategies of both kinds share: status
// belongs to the API server's flow control (/status), the generation
// follows the spec.
type configStrategy struct{ generic.GenerationStrategy }

// GetResetFields implements rest.ResetFieldsStrategy.
func (configStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("flowcontrol.apiserver.k8s.io/v1", "status")
}

// configStatus serves the status of both kinds, validated with validate:
// only status (and who manages it) changes. It has no defaults of the
// kinds (the main strategies' are not applied to status writes).
func configStatus(validate func(ctx context.Context, obj, old runtime.Object) field.ErrorList) generic.StatusStrategy {
	return generic.StatusStrategy{Main: generic.BaseStrategy{}, GroupVersion: "flowcontrol.apiserver.k8s.io/v1",
		KeepMetadata: true, Prepare: keepAllMetadata, Validate: validate}
}

// keepAllMetadata makes obj's metadata old's but for the managed fields:
// kube's flow control status strategies keep all of it, not only what
// PrepareStatusUpdate keeps.
func keepAllMetadata(obj, old runtime.Object) {
	m := obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
	managedFields := m.ManagedFields
	*m = *old.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
	m.ManagedFields = managedFields
}

var queuingDocs = flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()

var priorityLevels = generic.Resource{
	Name: "prioritylevelconfigurations", Singular: "prioritylevelconfiguration", Kind: "PriorityLevelConfiguration",
	New: generic.NewOf[flowcontrolv1.PriorityLevelConfiguration], NewList: generic.NewOf[flowcontrolv1.PriorityLevelConfigurationList],
	Strategy: priorityLevelStrategy{},
	StatusStrategy: configStatus(func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		return validatePriorityLevelStatus(&obj.(*flowcontrolv1.PriorityLevelConfiguration).Status, field.NewPath("status"))
	}),
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
		{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
		{Name: "Queues", Type: "string", Description: queuingDocs["queues"]},
		{Name: "HandSize", Type: "string", Description: queuingDocs["handSize"]},
		{Name: "QueueLengthLimit", Type: "string", Description: queuingDocs["queueLengthLimit"]},
		generic.AgeColumn,
	}, func(pl *flowcontrolv1.PriorityLevelConfiguration) ([]interface{}, error) {
		var shares, queues, handSize, queueLengthLimit interface{} = "<none>", "<none>", "<none>", "<none>"
		if l := pl.Spec.Limited; l != nil {
			shares = int64(ptr.Deref(l.NominalConcurrencyShares, 0))
			if q := l.LimitResponse.Queuing; q != nil {
				queues, handSize, queueLengthLimit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []interface{}{pl.Name, string(pl.Spec.Type), shares, queues, handSize, queueLengthLimit,
			generic.TranslateTimestampSince(pl.CreationTimestamp)}, nil
	}),
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
