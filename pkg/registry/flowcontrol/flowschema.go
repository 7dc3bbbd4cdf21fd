package flowcontrol

import (
	"context"
	"sort"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
