package flowcontrol

import (
	"fmt"
	"math"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

const (
	maxQueues = 10 * 1000 * 1000
	// maxHashBits bounds the entropy shuffle sharding may need (kube's
	// shufflesharding.MaxHashBits).
	maxHashBits = 60
	// preserveZeroSharesAnnotation round-trips v1beta3 objects; kube
	// forbids it on the objects it stores.
	preserveZeroSharesAnnotation = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"
)

var (
	supportedPriorityLevelTypes = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}
	supportedLimitResponseTypes = []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}
)

// validatePriorityLevel is kube's validation of a priority level (old is
// nil on create), then the rules kube v1.37 states declaratively at beta
// (which of exempt and limited a type needs; their messages replace the
// hand-written ones, after them).
func validatePriorityLevel(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&pl.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if _, ok := pl.Annotations[preserveZeroSharesAnnotation]; ok {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("metadata", "annotations"), fmt.Sprintf("annotation '%s' is forbidden", preserveZeroSharesAnnotation)))
	}
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validatePriorityLevelSpec(pl.Name, &pl.Spec, spec)...)
	allErrs = append(allErrs, validateMandatoryPriorityLevel(pl, spec)...)
	allErrs = append(allErrs, validatePriorityLevelStatus(&pl.Status, field.NewPath("status"))...)
	var oldSpec *flowcontrolv1.PriorityLevelConfigurationSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	return append(allErrs, validatePriorityLevelUnions(&pl.Spec, oldSpec, spec)...)
}

func validatePriorityLevelSpec(name string, spec *flowcontrolv1.PriorityLevelConfigurationSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if e := spec.Exempt; e != nil {
			allErrs = append(allErrs, validateShares(e.NominalConcurrencyShares, fldPath.Child("exempt", "nominalConcurrencyShares"), "must be a non-negative integer")...)
			allErrs = append(allErrs, validatePercent(e.LendablePercent, fldPath.Child("exempt", "lendablePercent"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if l := spec.Limited; l != nil {
			p := fldPath.Child("limited")
			allErrs = append(allErrs, validateShares(l.NominalConcurrencyShares, p.Child("nominalConcurrencyShares"), "must be a non-negative integer")...)
			allErrs = append(allErrs, validateLimitResponse(&l.LimitResponse, p.Child("limitResponse"))...)
			allErrs = append(allErrs, validatePercent(l.LendablePercent, p.Child("lendablePercent"))...)
			allErrs = append(allErrs, validateShares(l.BorrowingLimitPercent, p.Child("borrowingLimitPercent"), "if specified, must be a non-negative integer")...)
		}
	case "": // required: see validatePriorityLevelUnions
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, supportedPriorityLevelTypes))
	}
	return allErrs
}

func validateShares(v *int32, fldPath *field.Path, msg string) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(fldPath, *v, msg)}
	}
	return nil
}

func validatePercent(v *int32, fldPath *field.Path) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(fldPath, *v, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func validateLimitResponse(lr *flowcontrolv1.LimitResponse, fldPath *field.Path) field.ErrorList {
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing != nil {
			return validateQueuing(lr.Queuing, fldPath.Child("queuing"))
		}
	case flowcontrolv1.LimitResponseTypeReject, "": // see validatePriorityLevelUnions
	default:
		return field.ErrorList{field.NotSupported(fldPath.Child("type"), lr.Type, supportedLimitResponseTypes)}
	}
	return nil
}

func validateQueuing(q *flowcontrolv1.QueuingConfiguration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	handSize := fldPath.Child("handSize")
	switch {
	case q.HandSize <= 0:
		allErrs = append(allErrs, field.Invalid(handSize, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		allErrs = append(allErrs, field.Invalid(handSize, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case int(math.Ceil(math.Log2(float64(q.Queues))*float64(q.HandSize))) > maxHashBits:
		allErrs = append(allErrs, field.Invalid(handSize, q.HandSize,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, maxHashBits)))
	}
	return allErrs
}

// validateMandatoryPriorityLevel: a mandatory level keeps kube's spec;
// only the exempt level's exempt settings may change.
func validateMandatoryPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration, fldPath *field.Path) field.ErrorList {
	mand, ok := mandatoryPriorityLevels[pl.Name]
	if !ok {
		return nil
	}
	have, msg := pl.Spec.DeepCopy(), fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
	if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		have.Exempt = mand.Spec.Exempt
		msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
	}
	if apiequality.Semantic.DeepEqual(&mand.Spec, have) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, corevalidation.InternalValue(pl.Spec), msg)}
}

// validatePriorityLevelUnions are kube's declarative rules: type is
// required; limited is required with type Limited and forbidden
// otherwise, exempt forbidden but with type Exempt; queuing is required
// with the Queue limit response and forbidden otherwise, whose type is
// required. An update checks only what it changes.
func validatePriorityLevelUnions(spec, old *flowcontrolv1.PriorityLevelConfigurationSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	sameType := old != nil && old.Type == spec.Type
	if !(sameType && apiequality.Semantic.DeepEqual(spec.Exempt, old.Exempt)) && spec.Exempt != nil && spec.Type != flowcontrolv1.PriorityLevelEnablementExempt {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("exempt"), ""))
	}
	if !(sameType && apiequality.Semantic.DeepEqual(spec.Limited, old.Limited)) {
		switch isLimited := spec.Type == flowcontrolv1.PriorityLevelEnablementLimited; {
		case isLimited && spec.Limited == nil:
			allErrs = append(allErrs, field.Required(fldPath.Child("limited"), ""))
		case !isLimited && spec.Limited != nil:
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("limited"), ""))
		}
	}
	if spec.Type == "" && (old == nil || old.Type != "") {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), ""))
	}
	if spec.Limited != nil {
		var oldLR *flowcontrolv1.LimitResponse
		if old != nil && old.Limited != nil {
			oldLR = &old.Limited.LimitResponse
		}
		allErrs = append(allErrs, validateLimitResponseUnion(&spec.Limited.LimitResponse, oldLR, fldPath.Child("limited", "limitResponse"))...)
	}
	return allErrs
}

func validateLimitResponseUnion(lr, old *flowcontrolv1.LimitResponse, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if old == nil || old.Type != lr.Type || !apiequality.Semantic.DeepEqual(lr.Queuing, old.Queuing) {
		switch isQueue := lr.Type == flowcontrolv1.LimitResponseTypeQueue; {
		case isQueue && lr.Queuing == nil:
			allErrs = append(allErrs, field.Required(fldPath.Child("queuing"), ""))
		case !isQueue && lr.Queuing != nil:
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("queuing"), ""))
		}
	}
	if lr.Type == "" && (old == nil || old.Type != "") {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), ""))
	}
	return allErrs
}

func validatePriorityLevelStatus(status *flowcontrolv1.PriorityLevelConfigurationStatus, fldPath *field.Path) field.ErrorList {
	types := make([]string, len(status.Conditions))
	for i, c := range status.Conditions {
		types[i] = string(c.Type)
	}
	return validateConditionTypes(types, fldPath.Child("conditions"))
}
