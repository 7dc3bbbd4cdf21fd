package workload

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

var metadataPath = field.NewPath("metadata")

// ValidateMeta validates a new workload's metadata as kube does for most
// of them: its name a DNS subdomain (stateful sets want a label).
func ValidateMeta(obj runtime.Object) field.ErrorList {
	return corevalidation.ValidateObjectMeta(objectMeta(obj), true, apivalidation.NameIsDNSSubdomain, metadataPath)
}

// ValidateMetaUpdate validates a workload's metadata on update, on its
// main endpoint as on /status.
func ValidateMetaUpdate(obj, old runtime.Object) field.ErrorList {
	return corevalidation.ValidateObjectMetaUpdate(objectMeta(obj), objectMeta(old), metadataPath)
}

// ValidateSelectorUnchanged: the selector of a deployment, replica set,
// daemon set or stateful set never changes, lest it orphan its pods.
func ValidateSelectorUnchanged(selector, old *metav1.LabelSelector) field.ErrorList {
	return apivalidation.ValidateImmutableField(selector, old, field.NewPath("spec", "selector"))
}

// objectMeta is the ObjectMeta every workload type embeds, whose
// accessor is the pointer to it.
func objectMeta(obj runtime.Object) *metav1.ObjectMeta {
	return obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}
