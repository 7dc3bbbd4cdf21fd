package storagegroup

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kube's limits on the parameters of a class and on what a driver reports.
const (
	maxParameterCount      = 512
	maxParametersSize      = 256 * (1 << 10)
	maxAttachMetadataSize  = 256 * (1 << 10)
	maxVolumeErrorMessage  = 1024
	maxCSINodeIDLength     = 256
	maxCSIDriverNameLength = 63
)

// kube 1.37 checks some fields both by hand and declaratively; where the
// declarative rule is enforced, its error replaces the handwritten one
// and comes after the handwritten errors, worded as apimachinery's
// validate package words it. The helpers below are those rules.

// requiredValue is the declarative "required" of a string field.
func requiredValue(fldPath *field.Path, value string) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return nil
}

// immutable is the declarative "immutable" of a changed field: it names no
// value ("Invalid value: null: field is immutable").
func immutable(fldPath *field.Path) *field.Error {
	return field.Invalid(fldPath, nil, "field is immutable")
}

// validateProvisioner checks a provisioner (or driver) name as kube does:
// a qualified name, in lower case; emptiness is declarative.
func validateProvisioner(provisioner string, fldPath *field.Path) field.ErrorList {
	if provisioner == "" {
		return nil
	}
	return validateQualifiedName(strings.ToLower(provisioner), fldPath)
}

func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// validateParameters bounds a class's parameters: at most 512, no empty
// key, 256 KiB in all; allowEmpty false requires at least one.
func validateParameters(params map[string]string, allowEmpty bool, fldPath *field.Path) field.ErrorList {
	if len(params) > maxParameterCount {
		return field.ErrorList{field.TooLong(fldPath, "", maxParameterCount)}
	}
	var allErrs field.ErrorList
	size := 0
	for k, v := range params {
		if k == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxParametersSize {
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxParametersSize))
	}
	if !allowEmpty && len(params) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must contain at least one key/value pair"))
	}
	return allErrs
}

// validateCSIDriverName is kube's declarative check of a driver name
// (VolumeAttachment's attacher): required, a DNS subdomain in any case,
// at most 63 characters.
func validateCSIDriverName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	ctx, op := context.Background(), operation.Operation{}
	allErrs := validate.LongNameCaseless(ctx, op, fldPath, &name, nil)
	return append(allErrs, validate.MaxLength(ctx, op, fldPath, &name, nil, maxCSIDriverNameLength)...)
}
