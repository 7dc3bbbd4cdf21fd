package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"
)

// maxReviewResponseBytes bounds what a webhook may answer.
const maxReviewResponseBytes = 3 * 1024 * 1024

// sarClient POSTs SubjectAccessReviews to one webhook, at one version.
type sarClient struct {
	url     string
	version string
	http    *http.Client
}

func newSARClient(cfg *rest.Config, version string) (*sarClient, error) {
	if version != "v1" && version != "v1beta1" {
		return nil, fmt.Errorf("unsupported webhook authorizer version %q, supported versions are %q, %q", version, "v1", "v1beta1")
	}
	if cfg == nil {
		return nil, fmt.Errorf("webhook authorizer: no client configuration")
	}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, err
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &sarClient{url: u.String(), version: version, http: client}, nil
}

// create sends the review and returns the status the webhook answered. A
// response that is not 2xx is the apierrors error kube's REST client makes
// of it, so that kube's retry rules (5xx, 429, Retry-After) apply.
func (c *sarClient) create(ctx context.Context, review *authorizationv1.SubjectAccessReview) (authorizationv1.SubjectAccessReviewStatus, error) {
	var body any
	gv := authorizationv1.SchemeGroupVersion
	if c.version == "v1beta1" {
		gv = authorizationv1beta1.SchemeGroupVersion
		body = &authorizationv1beta1.SubjectAccessReview{TypeMeta: typeMeta(gv), Spec: v1beta1Spec(review.Spec)}
	} else {
		body = &authorizationv1.SubjectAccessReview{TypeMeta: typeMeta(gv), Spec: review.Spec}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := c.http.Do(req)
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxReviewResponseBytes))
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return authorizationv1.SubjectAccessReviewStatus{}, responseError(resp, data)
	}
	return decodeStatus(data, gv)
}

func typeMeta(gv schema.GroupVersion) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: gv.String(), Kind: "SubjectAccessReview"}
}

// responseError is the error of a response that is not 2xx: the Status it
// carries, or one made from its code, as client-go's REST client does.
func responseError(resp *http.Response, body []byte) error {
	var status metav1.Status
	if json.Unmarshal(body, &status) == nil && status.Kind == "Status" && status.Status == metav1.StatusFailure {
		if status.Code == 0 {
			status.Code = int32(resp.StatusCode)
		}
		return &apierrors.StatusError{ErrStatus: status}
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodPost, schema.GroupResource{}, "", strings.TrimSpace(string(body)), retryAfter, true)
}

// decodeStatus reads the webhook's answer: a SubjectAccessReview of
// authorization.k8s.io/v1 or v1beta1 (whichever it says; one that says
// nothing is taken as the version asked), as kube's decoder accepts both.
func decodeStatus(data []byte, gv schema.GroupVersion) (authorizationv1.SubjectAccessReviewStatus, error) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, fmt.Errorf("decoding the webhook's SubjectAccessReview: %w", err)
	}
	if meta.APIVersion != "" {
		gv = schema.FromAPIVersionAndKind(meta.APIVersion, "").GroupVersion()
	}
	if (meta.Kind != "" && meta.Kind != "SubjectAccessReview") || gv.Group != authorizationv1.GroupName || (gv.Version != "v1" && gv.Version != "v1beta1") {
		return authorizationv1.SubjectAccessReviewStatus{}, fmt.Errorf("the webhook answered %s %s, not a SubjectAccessReview", meta.APIVersion, meta.Kind)
	}
	if gv.Version == "v1beta1" {
		var r authorizationv1beta1.SubjectAccessReview
		if err := json.Unmarshal(data, &r); err != nil {
			return authorizationv1.SubjectAccessReviewStatus{}, err
		}
		s := r.Status
		return authorizationv1.SubjectAccessReviewStatus{Allowed: s.Allowed, Denied: s.Denied, Reason: s.Reason, EvaluationError: s.EvaluationError}, nil
	}
	var r authorizationv1.SubjectAccessReview
	if err := json.Unmarshal(data, &r); err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	return r.Status, nil
}

// v1beta1Spec is the spec at v1beta1 (whose groups are "group").
func v1beta1Spec(in authorizationv1.SubjectAccessReviewSpec) authorizationv1beta1.SubjectAccessReviewSpec {
	out := authorizationv1beta1.SubjectAccessReviewSpec{User: in.User, Groups: in.Groups, UID: in.UID}
	if in.Extra != nil {
		out.Extra = make(map[string]authorizationv1beta1.ExtraValue, len(in.Extra))
		for k, v := range in.Extra {
			out.Extra[k] = authorizationv1beta1.ExtraValue(v)
		}
	}
	if r := in.ResourceAttributes; r != nil {
		out.ResourceAttributes = &authorizationv1beta1.ResourceAttributes{
			Namespace: r.Namespace, Verb: r.Verb, Group: r.Group, Version: r.Version, Resource: r.Resource,
			Subresource: r.Subresource, Name: r.Name, FieldSelector: r.FieldSelector, LabelSelector: r.LabelSelector,
		}
	}
	if n := in.NonResourceAttributes; n != nil {
		out.NonResourceAttributes = &authorizationv1beta1.NonResourceAttributes{Path: n.Path, Verb: n.Verb}
	}
	return out
}

// reviewSpec is the SubjectAccessReview of a request's attributes.
func reviewSpec(a authorizer.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var spec authorizationv1.SubjectAccessReviewSpec
	if u := a.GetUser(); u != nil {
		spec.User, spec.UID, spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
		if extra := u.GetExtra(); extra != nil {
			spec.Extra = make(map[string]authorizationv1.ExtraValue, len(extra))
			for k, v := range extra {
				spec.Extra[k] = authorizationv1.ExtraValue(v)
			}
		}
	}
	if !a.IsResourceRequest() {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: a.GetPath(), Verb: a.GetVerb()}
		return spec
	}
	spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
		Namespace: a.GetNamespace(), Verb: a.GetVerb(), Group: a.GetAPIGroup(), Version: a.GetAPIVersion(),
		Resource: a.GetResource(), Subresource: a.GetSubresource(), Name: a.GetName(),
	}
	if reqs := fieldRequirements(a); len(reqs) > 0 {
		spec.ResourceAttributes.FieldSelector = &authorizationv1.FieldSelectorAttributes{Requirements: reqs}
	}
	if reqs := labelRequirements(a); len(reqs) > 0 {
		spec.ResourceAttributes.LabelSelector = &authorizationv1.LabelSelectorAttributes{Requirements: reqs}
	}
	return spec
}

// fieldRequirements are the request's field selector as the review states
// it. Requirements of other operators are left out: they only narrow, so
// the webhook is asked about a broader request, never a narrower one.
func fieldRequirements(a authorizer.Attributes) []metav1.FieldSelectorRequirement {
	reqs, _ := a.GetFieldSelector()
	var out []metav1.FieldSelectorRequirement
	for _, r := range reqs {
		var op metav1.FieldSelectorOperator
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals, selection.In:
			op = metav1.FieldSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.FieldSelectorOpNotIn
		default:
			continue
		}
		out = append(out, metav1.FieldSelectorRequirement{Key: r.Field, Operator: op, Values: []string{r.Value}})
	}
	return out
}

// labelRequirements are the request's label selector as the review states
// it, with the same rule as fieldRequirements.
func labelRequirements(a authorizer.Attributes) []metav1.LabelSelectorRequirement {
	reqs, _ := a.GetLabelSelector()
	var out []metav1.LabelSelectorRequirement
	for _, r := range reqs {
		var op metav1.LabelSelectorOperator
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			op = metav1.LabelSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.LabelSelectorOpNotIn
		case selection.Exists:
			op = metav1.LabelSelectorOpExists
		case selection.DoesNotExist:
			op = metav1.LabelSelectorOpDoesNotExist
		default:
			continue
		}
		req := metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op}
		if values := r.ValuesUnsorted(); len(values) > 0 {
			req.Values = values
		}
		out = append(out, req)
	}
	return out
}
