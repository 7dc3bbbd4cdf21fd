package authorization

import (
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// resourceAttributes is the request a review's resourceAttributes
// describe; an empty version means any. Selectors that do not parse are
// kept as parse errors, reported in the status, as kube does.
func resourceAttributes(u user.Info, in *authorizationv1.ResourceAttributes) authorizer.AttributesRecord {
	version := in.Version
	if version == "" {
		version = "*"
	}
	a := authorizer.AttributesRecord{
		User: u, Verb: in.Verb, Namespace: in.Namespace, APIGroup: in.Group, APIVersion: version,
		Resource: in.Resource, Subresource: in.Subresource, Name: in.Name, ResourceRequest: true,
	}
	if s := in.LabelSelector; s != nil {
		if s.RawSelector != "" {
			if sel, err := labels.Parse(s.RawSelector); err != nil {
				a.LabelSelectorParsingErr = err
			} else {
				a.LabelSelectorRequirements, _ = sel.Requirements()
			}
		}
		if len(s.Requirements) > 0 {
			a.LabelSelectorRequirements, a.LabelSelectorParsingErr = labelRequirements(s.Requirements)
		}
	}
	if s := in.FieldSelector; s != nil {
		if s.RawSelector != "" {
			if sel, err := fields.ParseSelector(s.RawSelector); err != nil {
				a.FieldSelectorParsingErr = err
			} else {
				a.FieldSelectorRequirements = sel.Requirements()
			}
		}
		if len(s.Requirements) > 0 {
			a.FieldSelectorRequirements, a.FieldSelectorParsingErr = fieldRequirements(s.Requirements)
		}
	}
	return a
}

func nonResourceAttributes(u user.Info, in *authorizationv1.NonResourceAttributes) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Path: in.Path, Verb: in.Verb}
}

var labelOperators = map[metav1.LabelSelectorOperator]selection.Operator{
	metav1.LabelSelectorOpIn:           selection.In,
	metav1.LabelSelectorOpNotIn:        selection.NotIn,
	metav1.LabelSelectorOpExists:       selection.Exists,
	metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
}

func labelRequirements(in []metav1.LabelSelectorRequirement) (labels.Requirements, error) {
	var (
		reqs labels.Requirements
		errs []error
	)
	for _, expr := range in {
		op, ok := labelOperators[expr.Operator]
		if !ok {
			errs = append(errs, fmt.Errorf("%q is not a valid label selector operator", expr.Operator))
			continue
		}
		values := expr.Values
		if len(values) == 0 {
			values = nil
		}
		req, err := labels.NewRequirement(expr.Key, op, values)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, *req)
	}
	return reqs, utilerrors.NewAggregate(errs)
}

func fieldRequirements(in []metav1.FieldSelectorRequirement) (fields.Requirements, error) {
	var (
		reqs fields.Requirements
		errs []error
	)
	for _, expr := range in {
		if len(expr.Values) > 1 {
			errs = append(errs, fmt.Errorf("fieldSelectors do not yet support multiple values"))
			continue
		}
		var op selection.Operator
		switch expr.Operator {
		case metav1.FieldSelectorOpIn:
			op = selection.Equals
		case metav1.FieldSelectorOpNotIn:
			op = selection.NotEquals
		case metav1.FieldSelectorOpExists, metav1.FieldSelectorOpDoesNotExist:
			errs = append(errs, fmt.Errorf("fieldSelectors do not yet support %v", expr.Operator))
			continue
		default:
			errs = append(errs, fmt.Errorf("%q is not a valid field selector operator", expr.Operator))
			continue
		}
		if len(expr.Values) != 1 {
			word := map[selection.Operator]string{selection.Equals: "in", selection.NotEquals: "not in"}[op]
			errs = append(errs, fmt.Errorf("fieldSelectors %s must have one value", word))
			continue
		}
		reqs = append(reqs, fields.Requirement{Field: expr.Key, Operator: op, Value: expr.Values[0]})
	}
	return reqs, utilerrors.NewAggregate(errs)
}

// evaluationError is the status's evaluationError: the authorizer's
// error, and which selectors were (partly) ignored.
func evaluationError(err error, a authorizer.AttributesRecord) string {
	var msgs []string
	if err != nil {
		msgs = append(msgs, err.Error())
	}
	add := func(what string, n int, parseErr error) {
		switch {
		case parseErr == nil:
		case n > 0:
			msgs = append(msgs, "spec.resourceAttributes."+what+" partially ignored due to parse error")
		default:
			msgs = append(msgs, "spec.resourceAttributes."+what+" ignored due to parse error")
		}
	}
	add("fieldSelector", len(a.FieldSelectorRequirements), a.FieldSelectorParsingErr)
	add("labelSelector", len(a.LabelSelectorRequirements), a.LabelSelectorParsingErr)
	return strings.Join(msgs, "; ")
}
