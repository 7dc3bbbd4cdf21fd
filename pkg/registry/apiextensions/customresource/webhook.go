package customresource

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhookclient"
)

// conversionError is what a conversion webhook's failure says, as kube
// words it: it reaches the client as is (an internal error), whatever
// converted through what.
type conversionError struct{ msg string }

func (e *conversionError) Error() string { return e.msg }

// webhookConverter converts through a definition's conversion webhook,
// with kube's ConversionReview (v1, or v1beta1 when the webhook names only
// that).
type webhookConverter struct {
	client        *webhookclient.Client
	reviewVersion string
}

// newWebhookConverter is the converter of crd's conversion webhook; a
// service is found through resolver.
func newWebhookConverter(crd *apiextensionsv1.CustomResourceDefinition, resolver webhookclient.ServiceResolver) (*webhookConverter, error) {
	w := crd.Spec.Conversion.Webhook
	if w == nil || w.ClientConfig == nil {
		return nil, errors.New("conversion strategy Webhook without a webhook")
	}
	var reviewVersion string
	for _, v := range w.ConversionReviewVersions {
		if v == "v1" || v == "v1beta1" {
			reviewVersion = v
			break
		}
	}
	if reviewVersion == "" {
		return nil, errors.New("no supported conversion review versions")
	}
	cfg := webhookclient.ClientConfig{CABundle: w.ClientConfig.CABundle}
	if w.ClientConfig.URL != nil {
		cfg.URL = *w.ClientConfig.URL
	}
	if s := w.ClientConfig.Service; s != nil {
		cfg.Service = &webhookclient.Service{Namespace: s.Namespace, Name: s.Name, Port: 443}
		if s.Port != nil {
			cfg.Service.Port = *s.Port
		}
		if s.Path != nil {
			cfg.Service.Path = *s.Path
		}
	}
	client, err := webhookclient.New(cfg, resolver)
	if err != nil {
		return nil, err
	}
	return &webhookConverter{client: client, reviewVersion: reviewVersion}, nil
}

// conversion is the conversion to a version through the webhook: an
// object already there, or empty (what kube's machinery converts to learn
// a kind), is only renamed, as kube's converter does.
func (w *webhookConverter) conversion(r *resource) func(to schema.GroupVersion) conversion.Func {
	return func(to schema.GroupVersion) conversion.Func {
		rename := r.rewriteAPIVersion(to)
		return func(in, out runtime.Object) error {
			src, ok := in.(*unstructured.Unstructured)
			if !ok {
				return fmt.Errorf("cannot convert %T", in)
			}
			if src.GetAPIVersion() == to.String() || isEmpty(src) {
				return rename(in, out)
			}
			converted, err := w.convert(src, to)
			if err != nil {
				return &conversionError{msg: fmt.Sprintf("conversion webhook for %v %v", src.GroupVersionKind(), err)}
			}
			dst := out.(*unstructured.Unstructured)
			dst.Object = converted.Object
			_, err = r.coerce(dst.Object, coerceOptions{})
			return err
		}
	}
}

// isEmpty reports an object with nothing but its kind.
func isEmpty(u *unstructured.Unstructured) bool {
	_, kind := u.Object["kind"]
	_, apiVersion := u.Object["apiVersion"]
	return len(u.Object) == 2 && kind && apiVersion
}

// convert has the webhook convert in to version to, and checks what it
// answers as kube does: the object keeps its kind, name, namespace and
// uid, and of its metadata the webhook may change labels and annotations
// only. Errors are worded to follow "conversion webhook for <kind> ".
func (w *webhookConverter) convert(in *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error) {
	uid := types.UID(uuid.NewString())
	review := &apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/" + w.reviewVersion, Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: to.String(),
			Objects: []runtime.RawExtension{{Object: in}}},
	}
	answer := &apiextensionsv1.ConversionReview{}
	if err := w.client.Post(context.Background(), review, answer); err != nil {
		return nil, fmt.Errorf("failed: %v", err)
	}
	objects, err := w.convertedObjects(uid, answer)
	if err != nil {
		return nil, fmt.Errorf("failed: %v", err)
	}
	if len(objects) != 1 {
		return nil, fmt.Errorf("returned %d objects, expected 1", len(objects))
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(objects[0].Raw); err != nil {
		return nil, err
	}
	if e, a := to, out.GroupVersionKind().GroupVersion(); e != a {
		return nil, fmt.Errorf("returned invalid object at index 0: invalid groupVersion (expected %v, received %v)", e, a)
	}
	if e, a := in.GetKind(), out.GetKind(); e != a {
		return nil, fmt.Errorf("returned invalid object at index 0: invalid kind (expected %v, received %v)", e, a)
	}
	if err := sameObject(in, out); err != nil {
		return nil, fmt.Errorf("returned invalid object: %v", err)
	}
	if err := restoreMetadata(in, out); err != nil {
		return nil, fmt.Errorf("returned invalid metadata: %v", err)
	}
	return out, nil
}

// convertedObjects are the objects of a successful answer to the review
// uid.
func (w *webhookConverter) convertedObjects(uid types.UID, answer *apiextensionsv1.ConversionReview) ([]runtime.RawExtension, error) {
	if w.reviewVersion == "v1" {
		if gvk := answer.GroupVersionKind(); gvk != apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview") {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview"), gvk)
		}
	}
	resp := answer.Response
	if resp == nil {
		return nil, errors.New("no response provided")
	}
	// kube checks the uid of v1 answers only.
	if w.reviewVersion == "v1" && resp.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, resp.UID)
	}
	if resp.Result.Status != metav1.StatusSuccess {
		if resp.Result.Message != "" {
			return nil, errors.New(resp.Result.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", resp.Result.Status)
	}
	return resp.ConvertedObjects, nil
}

// sameObject checks that out is in converted: the same kind and object.
func sameObject(in, out *unstructured.Unstructured) error {
	if e, a := in.GetKind(), out.GetKind(); e != a {
		return fmt.Errorf("must have the same kind: %v != %v", e, a)
	}
	if e, a := in.GetName(), out.GetName(); e != a {
		return fmt.Errorf("must have the same name: %v != %v", e, a)
	}
	if e, a := in.GetNamespace(), out.GetNamespace(); e != a {
		return fmt.Errorf("must have the same namespace: %v != %v", e, a)
	}
	if e, a := in.GetUID(), out.GetUID(); e != a {
		return fmt.Errorf("must have the same UID: %v != %v", e, a)
	}
	return nil
}

// restoreMetadata gives converted the metadata of original but for the
// labels and annotations the webhook answered, which must be valid.
func restoreMetadata(original, converted *unstructured.Unstructured) error {
	answered, ok := converted.Object["metadata"].(map[string]interface{})
	if !ok {
		return fmt.Errorf("missing metadata in converted object")
	}
	restored := map[string]interface{}{}
	if m, ok := original.Object["metadata"].(map[string]interface{}); ok {
		restored = runtime.DeepCopyJSONValue(m).(map[string]interface{})
	}
	converted.Object["metadata"] = restored
	for _, fld := range []string{"labels", "annotations"} {
		value, found := answered[fld]
		if !found || value == nil {
			delete(restored, fld)
			continue
		}
		m, ok := value.(map[string]interface{})
		if !ok {
			return fmt.Errorf("invalid metadata.%s of type %T in converted object", fld, value)
		}
		strs := make(map[string]string, len(m))
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", fld, k, v)
			}
			strs[k] = s
		}
		var errs field.ErrorList
		if fld == "labels" {
			errs = metav1validation.ValidateLabels(strs, field.NewPath("metadata", "labels"))
		} else {
			errs = validation.ValidateAnnotations(strs, field.NewPath("metadata", "annotation"))
		}
		if len(errs) > 0 {
			return errs.ToAggregate()
		}
		restored[fld] = m
	}
	return nil
}
