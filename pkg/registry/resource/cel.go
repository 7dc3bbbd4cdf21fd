package resource

import (
	"errors"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// celFeatures are the DRA features of kube 1.37's defaults that change
// what a selector may use: consumable capacity is on, list-typed
// attributes are not.
var celFeatures = dracel.Features{EnableConsumableCapacity: true}

// validateCELSelector compiles a device selector as kube does, with the
// environment of new expressions, and checks its estimated cost. A stored
// expression was valid when it was stored: it is not checked again.
func validateCELSelector(expression string, fldPath *field.Path, stored bool) field.ErrorList {
	if stored {
		return nil
	}
	if len(expression) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(fldPath, "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	envType := environment.NewExpressions
	result := dracel.GetCompiler(celFeatures).CompileCELExpression(expression, dracel.Options{EnvType: &envType})
	if result.Error != nil {
		return field.ErrorList{celError(fldPath, expression, result.Error)}
	}
	if result.MaxCost > resourcev1.CELSelectorExpressionMaxCost {
		return field.ErrorList{field.Forbidden(fldPath, "too complex, exceeds cost limit")}
	}
	return nil
}

func celError(fldPath *field.Path, expression string, err error) *field.Error {
	var celErr *apiservercel.Error
	if errors.As(err, &celErr) {
		switch celErr.Type {
		case apiservercel.ErrorTypeRequired:
			return field.Required(fldPath, celErr.Detail)
		case apiservercel.ErrorTypeInvalid:
			return field.Invalid(fldPath, expression, celErr.Detail)
		case apiservercel.ErrorTypeInternal:
			return field.InternalError(fldPath, celErr)
		}
	}
	return field.InternalError(fldPath, fmt.Errorf("unsupported error type: %w", err))
}

func validateSelectors(selectors []resourcev1.DeviceSelector, fldPath *field.Path, stored bool) field.ErrorList {
	return validateSlice(selectors, resourcev1.DeviceSelectorsMaxSize, func(s resourcev1.DeviceSelector, fldPath *field.Path) field.ErrorList {
		if s.CEL == nil {
			return field.ErrorList{field.Required(fldPath.Child("cel"), "")}
		}
		return validateCELSelector(s.CEL.Expression, fldPath.Child("cel", "expression"), stored)
	}, fldPath, sizeCovered)
}
