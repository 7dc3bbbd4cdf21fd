package request

import "context"

// AuditAnnotator records annotations on the audit event of a request (the
// apiserver's audit context implements it).
type AuditAnnotator interface {
	AddAuditAnnotation(key, value string)
}

// WithAuditAnnotator returns a context whose audit annotations go to a.
func WithAuditAnnotator(ctx context.Context, a AuditAnnotator) context.Context {
	return context.WithValue(ctx, auditKey, a)
}

// AuditAnnotatorFrom returns the request's annotator, if any.
func AuditAnnotatorFrom(ctx context.Context) (AuditAnnotator, bool) {
	a, ok := ctx.Value(auditKey).(AuditAnnotator)
	return a, ok
}

// AddAuditAnnotation annotates the audit event of the request in ctx (as
// kube's audit.AddAuditAnnotation): a key keeps its first value. Without
// an audited request it does nothing.
func AddAuditAnnotation(ctx context.Context, key, value string) {
	if a, ok := AuditAnnotatorFrom(ctx); ok {
		a.AddAuditAnnotation(key, value)
	}
}
