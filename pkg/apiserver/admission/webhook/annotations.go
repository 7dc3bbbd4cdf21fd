package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// The audit annotations of webhook calls, with kube's keys and values, so
// that whoever reads an audit log written by kube reads ours: which
// mutating webhook was called in which round and whether it changed the
// object (and, at the Request level, its patch), which webhook failed
// open, and what a webhook's answer asked to be recorded.
const (
	mutationAnnotationPrefix   = "mutation.webhook.admission.k8s.io/"
	patchAnnotationPrefix      = "patch.webhook.admission.k8s.io/"
	failedOpenMutatingPrefix   = "failed-open." + mutationAnnotationPrefix
	failedOpenValidatingPrefix = "failed-open.validating.webhook.admission.k8s.io/"
)

// callSite is where a call was made: the round (1 when mutating webhooks
// are called again) and the webhook's index, which kube counts among all
// the mutating webhooks, and among the validating webhooks the request
// concerns.
type callSite struct{ round, index int }

func (s callSite) key(prefix string) string {
	return fmt.Sprintf("%sround_%d_index_%d", prefix, s.round, s.index)
}

// annotateMutation records that h was called and whether it changed the
// object (false also when the call failed).
func annotateMutation(ctx context.Context, h *hook, at callSite, mutated bool) {
	value, err := json.Marshal(struct {
		Configuration string `json:"configuration"`
		Webhook       string `json:"webhook"`
		Mutated       bool   `json:"mutated"`
	}{h.configuration, h.name, mutated})
	if err != nil {
		slog.Warn("admission webhooks: composing the mutation audit annotation", "webhook", h.name, "error", err)
		return
	}
	request.AddAuditAnnotation(ctx, at.key(mutationAnnotationPrefix), string(value))
}

// annotatePatch records the JSON patch h answered, when the request is
// audited at the Request level or above (the patch may hold the object's
// data, which Metadata leaves out).
func annotatePatch(ctx context.Context, h *hook, at callSite, patch jsonpatch.Patch) {
	value, err := json.Marshal(struct {
		Configuration string          `json:"configuration"`
		Webhook       string          `json:"webhook"`
		Patch         jsonpatch.Patch `json:"patch,omitempty"`
		PatchType     string          `json:"patchType,omitempty"`
	}{h.configuration, h.name, patch, string(admissionv1.PatchTypeJSONPatch)})
	if err != nil {
		slog.Warn("admission webhooks: composing the patch audit annotation", "webhook", h.name, "error", err)
		return
	}
	audit.From(ctx).AddAuditAnnotationAtLevel(at.key(patchAnnotationPrefix), string(value), auditv1.LevelRequest)
}

// failedOpen records, in the audit event and in m, that a failure to
// call h was let pass (failurePolicy Ignore).
func failedOpen(ctx context.Context, m *Metrics, h *hook, at callSite) {
	prefix := failedOpenValidatingPrefix
	if h.mutating {
		prefix = failedOpenMutatingPrefix
	}
	request.AddAuditAnnotation(ctx, at.key(prefix), h.name)
	m.webhookFailOpen.WithLabelValues(h.name, metricType(h)).Inc()
}

// annotateAnswer records the auditAnnotations of h's answer, each key
// prefixed with the webhook's name as kube does (so that no webhook can
// write another's, or the server's, keys).
func annotateAnswer(ctx context.Context, h *hook, annotations map[string]string) {
	for k, v := range annotations {
		request.AddAuditAnnotation(ctx, h.name+"/"+k, v)
	}
}
