package networking

import (
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks below are shared by the group's kinds. Where kube 1.37 moved
// a rule to the declarative validation of the API types (a "+required"
// field, an immutable one), its error comes after the handwritten ones,
// without a detail, and an update does not check again a value it leaves
// as it was: each kind's declarative* function states those rules.

// requiredValue is a declarative "+required" string field.
func requiredValue(value string, fldPath *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return nil
}

// requiredPathSegment: a name that is required and must be usable as a
// segment of a URL path.
func requiredPathSegment(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return pathSegment(name, fldPath)
}

// pathSegment: a name usable as a segment of a URL path.
func pathSegment(name string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsPathSegmentName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}
