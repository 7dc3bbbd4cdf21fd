package generic

import "fmt"

// FieldLabelConversionFunc checks (and may rename) the field of a field
// selector requirement, as kube's per-kind field label conversion
// functions do; its error is the message of the 400 a list or watch gets.
type FieldLabelConversionFunc func(label, value string) (internalLabel, internalValue string, err error)

// SupportedFieldLabels returns a conversion that accepts exactly labels
// (and metadata.name, metadata.namespace), with kube's message for others.
func SupportedFieldLabels(labels ...string) FieldLabelConversionFunc {
	return ExactFieldLabels(append([]string{"metadata.name", "metadata.namespace"}, labels...)...)
}

// ExactFieldLabels returns a conversion that accepts exactly labels, with
// kube's message for others: the kinds whose conversion names its fields
// one by one, leaving out metadata.namespace (certificates.k8s.io's).
func ExactFieldLabels(labels ...string) FieldLabelConversionFunc {
	ok := make(map[string]bool, len(labels))
	for _, l := range labels {
		ok[l] = true
	}
	return func(label, value string) (string, string, error) {
		if !ok[label] {
			return "", "", fmt.Errorf("field label not supported: %s", label)
		}
		return label, value, nil
	}
}
