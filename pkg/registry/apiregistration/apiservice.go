package apiregistration

import (
	"context"
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

const groupVersion = "apiregistration.k8s.io/v1"

var apiServices = generic.Resource{
	Name: "apiservices", Singular: "apiservice", Kind: "APIService",
	Categories: []string{"api-extensions"},
	New:        generic.NewOf[apiregistrationv1.APIService], NewList: generic.NewOf[apiregistrationv1.APIServiceList],
	Strategy:       apiServiceStrategy{},
	StatusStrategy: apiServiceStatusStrategy{},
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
		{Name: "Available", Type: "string", Description: "Whether this service is available."},
		generic.AgeColumn,
	}, func(s *apiregistrationv1.APIService) ([]interface{}, error) {
		service := "Local"
		if s.Spec.Service != nil {
			service = s.Spec.Service.Namespace + "/" + s.Spec.Service.Name
		}
		return []interface{}{s.Name, service, availability(s), generic.TranslateTimestampSince(s.CreationTimestamp)}, nil
	}),
}

// availability is the Available column: the condition's status, with its
// reason when not True ("False (ServiceNotFound)"), or "Unknown".
func availability(s *apiregistrationv1.APIService) string {
	for _, c := range s.Status.Conditions {
		if c.Type != apiregistrationv1.Available {
			continue
		}
		if c.Status == apiregistrationv1.ConditionTrue {
			return string(c.Status)
		}
		return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	}
	return "Unknown"
}

// apiServiceStrategy is kube-aggregator's: a new APIService starts with no
// status, but a Local one (no service) is Available at once; updates keep
// the status and must name the resourceVersion they read.
type apiServiceStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = apiServiceStrategy{}

func (apiServiceStrategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields implements rest.ResetFieldsStrategy.
func (apiServiceStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersion, "status")
}

// Default implements rest.Defaulter: a service reference's port is 443.
func (apiServiceStrategy) Default(obj runtime.Object) {
	if svc := obj.(*apiregistrationv1.APIService).Spec.Service; svc != nil && svc.Port == nil {
		port := int32(443)
		svc.Port = &port
	}
}

func (apiServiceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	s := obj.(*apiregistrationv1.APIService)
	s.Status = apiregistrationv1.APIServiceStatus{}
	if s.Spec.Service == nil {
		s.Status.Conditions = []apiregistrationv1.APIServiceCondition{localAvailable(metav1.Now())}
	}
}

// localAvailable is the condition of a Local APIService, which kube marks
// available when it is created.
func localAvailable(now metav1.Time) apiregistrationv1.APIServiceCondition {
	return apiregistrationv1.APIServiceCondition{
		Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue, LastTransitionTime: now,
		Reason: "Local", Message: "Local APIServices are always available",
	}
}

func (apiServiceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
}

func (apiServiceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateAPIService(obj.(*apiregistrationv1.APIService))
}

func (apiServiceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*apiregistrationv1.APIService), old.(*apiregistrationv1.APIService)
	allErrs := apivalidation.ValidateObjectMetaUpdate(&s.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateAPIService(s)...)
}

// apiServiceStatusStrategy serves apiservices/status: only the status
// changes (kube keeps spec, labels, annotations, finalizers and owners).
type apiServiceStatusStrategy struct{ apiServiceStrategy }

// GetResetFields implements rest.ResetFieldsStrategy.
func (apiServiceStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersion, "spec", "metadata")
}

func (apiServiceStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s, oldS := obj.(*apiregistrationv1.APIService), old.(*apiregistrationv1.APIService)
	s.Spec = oldS.Spec
	s.Labels, s.Annotations = oldS.Labels, oldS.Annotations
	s.Finalizers, s.OwnerReferences = oldS.Finalizers, oldS.OwnerReferences
}

func (apiServiceStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*apiregistrationv1.APIService), old.(*apiregistrationv1.APIService)
	allErrs := apivalidation.ValidateObjectMetaUpdate(&s.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateAPIServiceStatus(&s.Status, field.NewPath("status"))...)
}
