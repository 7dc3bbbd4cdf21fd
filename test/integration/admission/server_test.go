package admission

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// webhookServer answers admission reviews over HTTPS with a certificate
// for 127.0.0.1 signed by a CA of its own. Each path is a behaviour:
//
//	/allow    allows
//	/deny     refuses with code 403 and a message
//	/mutate   adds the label mutated=<n>, n the calls so far on the path
//	/warn     allows, with two warnings
//	/slow     answers after 3 seconds
//	/invalid  sets the label mutated to a value no label may have
//	/garbage  answers what is not a review
//	/scale3   sets spec.replicas to 3 (of a Scale)
//	/annotate sets the annotations to annotated=yes
//	/auditlabel sets the labels to audited=yes, and asks the audit event
//	          to carry reason=labelled
//	/nocontainer sets the container of a connect's options to "nope"
type webhookServer struct {
	server *testserver.WebhookServer

	mu      sync.Mutex
	reviews map[string][]*admissionv1.AdmissionReview // by path
	queries map[string]string                         // the last query string by path
}

// startWebhookServer starts the server, its certificate naming 127.0.0.1
// and dnsNames.
func startWebhookServer(t testing.TB, dnsNames ...string) *webhookServer {
	t.Helper()
	w := &webhookServer{reviews: map[string][]*admissionv1.AdmissionReview{}, queries: map[string]string{}}
	w.server = testserver.StartWebhookServer(t, http.HandlerFunc(w.serve), dnsNames...)
	return w
}

func (w *webhookServer) serve(rw http.ResponseWriter, r *http.Request) {
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(rw, "not a review", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.reviews[r.URL.Path] = append(w.reviews[r.URL.Path], review)
	w.queries[r.URL.Path] = r.URL.RawQuery
	calls := len(w.reviews[r.URL.Path])
	w.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	switch r.URL.Path {
	case "/deny":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: "widgets are not welcome here"}
	case "/mutate":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "add", "path": "/metadata/labels/mutated", "value": string(rune('0' + calls))}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/invalid":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "add", "path": "/metadata/labels/mutated", "value": "-bad-"}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/ghost-account":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "replace", "path": "/spec/serviceAccountName", "value": "ghost"}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/sidecar":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "add", "path": "/spec/containers/-", "value": map[string]string{"name": "sidecar", "image": "busybox"}}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/scale3":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "replace", "path": "/spec/replicas", "value": 3}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/annotate":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "add", "path": "/metadata/annotations", "value": map[string]string{"annotated": "yes"}}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/auditlabel":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "add", "path": "/metadata/labels", "value": map[string]string{"audited": "yes"}}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
		resp.AuditAnnotations = map[string]string{"reason": "labelled"}
	case "/nocontainer":
		patch, _ := json.Marshal([]map[string]interface{}{{"op": "add", "path": "/container", "value": "nope"}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/warn":
		resp.Warnings = []string{"first warning", "second warning"}
	case "/slow":
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	case "/garbage":
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"wrong","allowed":true}}`))
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// calls returns the reviews path received.
func (w *webhookServer) calls(path string) []*admissionv1.AdmissionReview {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*admissionv1.AdmissionReview(nil), w.reviews[path]...)
}

func (w *webhookServer) query(path string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queries[path]
}

// clientConfig calls path on w.
func (w *webhookServer) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", w.server.Port(), path)), CABundle: w.server.CAPEM}
}

// inNamespace selects the namespace ns only.
func inNamespace(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
}

// rule matches the operations on resources of group/version.
func rule(group, version string, resources []string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
		APIGroups: []string{group}, APIVersions: []string{version}, Resources: resources,
		Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}
}

// validating returns a webhook of a validating configuration: path of w,
// for rules, in namespace ns.
func validating(name string, w *webhookServer, path, ns string, rules ...admissionregistrationv1.RuleWithOperations) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{Name: name, ClientConfig: w.clientConfig(path), Rules: rules,
		NamespaceSelector: inNamespace(ns), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"}}
}

func mutating(name string, w *webhookServer, path, ns string, rules ...admissionregistrationv1.RuleWithOperations) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{Name: name, ClientConfig: w.clientConfig(path), Rules: rules,
		NamespaceSelector: inNamespace(ns), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"}}
}
