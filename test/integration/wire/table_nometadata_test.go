package wire

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTableOfBackendWithoutMetadata: a Table of a resource that cannot be
// printed (the reviews: no metadata, no table convertor) fails
// negotiation with 406 before the request runs, as kube-apiserver's
// (the endpoint's scope has no TableConvertor, so as=Table is no media
// type it produces: handlers/rest.go AllowsMediaTypeTransform). This is
// kube's conformance test "Servers with support for Table transformation
// should return a 406 for a backend which does not implement metadata";
// a later clause of Accept is still served.
func TestTableOfBackendWithoutMetadata(t *testing.T) {
	t.Parallel()
	sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/", Verb: "get"},
	}}
	table := &metav1.Table{}
	err := clientset(t).AuthorizationV1().RESTClient().Post().Resource("selfsubjectaccessreviews").
		SetHeader("Accept", acceptTable).Body(sar).Do(context.Background()).Into(table)
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Code != http.StatusNotAcceptable {
		t.Fatalf("client-go: %v, want a 406", err)
	}

	const message = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	for _, tc := range []struct {
		name, path, body, accept string
		wantCode                 int
	}{
		{"selfsubjectaccessreviews", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			`{"spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`, acceptTable, http.StatusNotAcceptable},
		{"tokenreviews", "/apis/authentication.k8s.io/v1/tokenreviews",
			`{"spec":{"token":"not-a-token"}}`, acceptTable, http.StatusNotAcceptable},
		{"a JSON fallback", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			`{"spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`, acceptTable + ", application/json", http.StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := do(t, req{method: http.MethodPost, path: tc.path, body: []byte(tc.body),
				headers: []string{"Content-Type: application/json", "Accept: " + tc.accept}})
			if got.code != tc.wantCode {
				t.Fatalf("code %d %s, want %d", got.code, got.body, tc.wantCode)
			}
			if tc.wantCode != http.StatusNotAcceptable {
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(got.body, &st); err != nil {
				t.Fatal(err)
			}
			if st.Reason != metav1.StatusReasonNotAcceptable || st.Message != message || st.Code != http.StatusNotAcceptable {
				t.Errorf("status %+v, want NotAcceptable %q", st, message)
			}
		})
	}
}
