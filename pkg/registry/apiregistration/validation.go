package apiregistration

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// validateAPIService checks an APIService as kube-aggregator does: its
// name is "<version>.<group>", the group a DNS subdomain (empty only for
// the legacy v1), the version a DNS label, the priorities in range, and a
// Local APIService (no service) carries no TLS settings.
func validateAPIService(s *apiregistrationv1.APIService) field.ErrorList {
	spec, specPath := &s.Spec, field.NewPath("spec")
	requiredName := spec.Version + "." + spec.Group
	allErrs := apivalidation.ValidateObjectMeta(&s.ObjectMeta, false, func(name string, _ bool) []string {
		if errs := content.IsPathSegmentName(name); len(errs) > 0 {
			return errs
		}
		if name != requiredName {
			return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", requiredName)}
		}
		return nil
	}, field.NewPath("metadata"))

	if spec.Group == "" && spec.Version != "v1" {
		allErrs = append(allErrs, field.Required(specPath.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if spec.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(spec.Group) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("group"), spec.Group, msg))
		}
	}
	for _, msg := range validation.IsDNS1035Label(spec.Version) {
		allErrs = append(allErrs, field.Invalid(specPath.Child("version"), spec.Version, msg))
	}
	if p := spec.GroupPriorityMinimum; p <= 0 || p > 20000 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := spec.VersionPriority; p <= 0 || p > 1000 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("versionPriority"), p, "must be positive and less than 1000"))
	}

	svc := spec.Service
	if svc == nil {
		if len(spec.CABundle) != 0 {
			allErrs = append(allErrs, field.Invalid(specPath.Child("caBundle"), fmt.Sprintf("%d bytes", len(spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if spec.InsecureSkipTLSVerify {
			allErrs = append(allErrs, field.Invalid(specPath.Child("insecureSkipTLSVerify"), true, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return allErrs
	}
	svcPath := specPath.Child("service")
	if svc.Namespace == "" {
		allErrs = append(allErrs, field.Required(svcPath.Child("namespace"), ""))
	}
	if svc.Name == "" {
		allErrs = append(allErrs, field.Required(svcPath.Child("name"), ""))
	}
	// The strategy defaults the port to 443.
	if port := svc.Port; port != nil {
		if errs := validation.IsValidPortNum(int(*port)); errs != nil {
			allErrs = append(allErrs, field.Invalid(svcPath.Child("port"), *port, "port is not valid: "+strings.Join(errs, ", ")))
		}
	}
	if spec.InsecureSkipTLSVerify && len(spec.CABundle) > 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("insecureSkipTLSVerify"), true, "may not be true if caBundle is present"))
	}
	return allErrs
}

// validateAPIServiceStatus accepts the condition statuses True, False and
// Unknown.
func validateAPIServiceStatus(status *apiregistrationv1.APIServiceStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range status.Conditions {
		switch c.Status {
		case apiregistrationv1.ConditionTrue, apiregistrationv1.ConditionFalse, apiregistrationv1.ConditionUnknown:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("conditions").Index(i).Child("status"), c.Status,
				[]string{string(apiregistrationv1.ConditionTrue), string(apiregistrationv1.ConditionFalse), string(apiregistrationv1.ConditionUnknown)}))
		}
	}
	return allErrs
}
