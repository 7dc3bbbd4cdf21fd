package resource

import (
	"context"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var sliceSpecDocs = resourcev1.ResourceSliceSpec{}.SwaggerDoc()

var resourceSlices = generic.Resource{
	Name: "resourceslices", Singular: "resourceslice", Kind: "ResourceSlice",
	New: generic.NewOf[resourcev1.ResourceSlice], NewList: generic.NewOf[resourcev1.ResourceSliceList],
	Strategy: resourceSliceStrategy{generic.BaseStrategy{}},
	// The kubelet's DRA manager and each driver's plugin watch the
	// slices of their node (and driver).
	AttrFunc:             resourceSliceAttrs,
	FieldLabelConversion: resourceSliceFieldLabelConversion,
	IndexFields:          []string{resourcev1.ResourceSliceSelectorNodeName},
	ReturnDeletedObject:  true,
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Node", Type: "string", Description: sliceSpecDocs["nodeName"]},
		{Name: "Driver", Type: "string", Description: sliceSpecDocs["driver"]},
		{Name: "Pool", Type: "string", Description: resourcev1.ResourcePool{}.SwaggerDoc()["name"]},
		generic.AgeColumn,
	}, func(s *resourcev1.ResourceSlice) ([]interface{}, error) {
		node := ""
		if s.Spec.NodeName != nil {
			node = *s.Spec.NodeName
		}
		return []interface{}{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, generic.TranslateTimestampSince(s.CreationTimestamp)}, nil
	}),
}

func resourceSliceAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	s, ok := obj.(*resourcev1.ResourceSlice)
	if !ok {
		return nil, nil, fmt.Errorf("not a ResourceSlice")
	}
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return labels.Set(s.Labels), fields.Set{
		"metadata.name":                          s.Name,
		resourcev1.ResourceSliceSelectorNodeName: node,
		resourcev1.ResourceSliceSelectorDriver:   s.Spec.Driver,
		resourcev1.ResourceSliceSelectorPoolName: s.Spec.Pool.Name,
	}, nil
}

// resourceSliceFieldLabelConversion accepts what kube's does, with its
// message for the rest (metadata.namespace included: slices have none).
func resourceSliceFieldLabelConversion(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", resourcev1.ResourceSliceSelectorNodeName, resourcev1.ResourceSliceSelectorDriver, resourcev1.ResourceSliceSelectorPoolName:
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported for %s: %s", resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"), label)
}

// resourceSliceStrategy: a slice counts the changes of its spec in its
// generation; its driver, pool and node never change.
type resourceSliceStrategy struct{ generic.BaseStrategy }

func (resourceSliceStrategy) Default(obj runtime.Object) {
	s := obj.(*resourcev1.ResourceSlice)
	for i := range s.Spec.Devices {
		for j := range s.Spec.Devices[i].Taints {
			defaultTaint(&s.Spec.Devices[i].Taints[j])
		}
	}
}

func (resourceSliceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.StartGeneration(obj)
	dropDisabledSliceFields(&obj.(*resourcev1.ResourceSlice).Spec, nil)
}

func (resourceSliceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.BumpGenerationOnSpecChange(obj, old)
	dropDisabledSliceFields(&obj.(*resourcev1.ResourceSlice).Spec, &old.(*resourcev1.ResourceSlice).Spec)
}

func (resourceSliceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	s := obj.(*resourcev1.ResourceSlice)
	allErrs := corevalidation.ValidateObjectMeta(&s.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return declarativeLast(append(allErrs, validateSliceSpec(&s.Spec, nil, field.NewPath("spec"))...))
}

func (resourceSliceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&s.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
	return declarativeLast(append(allErrs, validateSliceSpec(&s.Spec, &oldS.Spec, field.NewPath("spec"))...))
}

func (resourceSliceStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return driverCaseWarning(obj.(*resourcev1.ResourceSlice).Spec.Driver)
}

func (resourceSliceStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return driverCaseWarning(obj.(*resourcev1.ResourceSlice).Spec.Driver)
}

func driverCaseWarning(driver string) []string {
	if driver == strings.ToLower(driver) {
		return nil
	}
	return []string{fmt.Sprintf("spec.driver: driver names should be lowercase; %q contains uppercase characters", driver)}
}
