// Package audit records what the server was asked and answered, as
// kube-apiserver's audit log does: a Policy (audit.k8s.io/v1) decides per
// request the level (None, Metadata, Request, RequestResponse) and the
// stages to leave out, events are built along the request by the filters
// and handlers through the request's Context, and a Backend writes them
// as JSON lines without ever blocking a request.
//
// Layers: part of pkg/apiserver; imports the registry's request package
// (the request's Info and its audit-annotation hook) and nothing above.
package audit

import (
	"context"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// Context is the audit state of one request: its ID and arrival time
// (every request has them), and the event being built when the policy
// audits the request. Safe for concurrent use; methods on a nil Context
// do nothing.
type Context struct {
	id       string
	received time.Time
	metrics  *Metrics

	mu    sync.Mutex
	event *auditv1.Event // nil while (or when) the request is not audited
	rule  RequestConfig
}

// NewContext starts the audit state of a request that arrived at
// received; its events are counted in m, the server's (nil:
// unregistered).
func NewContext(id string, received time.Time, m *Metrics) *Context {
	return &Context{id: id, received: received, metrics: m.orUnregistered()}
}

// WithContext returns ctx carrying ac, which also receives the request's
// audit annotations (request.AddAuditAnnotation).
func WithContext(ctx context.Context, ac *Context) context.Context {
	return request.WithAuditAnnotator(ctx, ac)
}

// From returns the audit state of the request in ctx, nil when none.
func From(ctx context.Context) *Context {
	a, _ := request.AuditAnnotatorFrom(ctx)
	ac, _ := a.(*Context)
	return ac
}

// ID is the request's audit ID (the Audit-ID header).
func (ac *Context) ID() string {
	if ac == nil {
		return ""
	}
	return ac.id
}

// Received is when the request arrived.
func (ac *Context) Received() time.Time {
	if ac == nil {
		return time.Time{}
	}
	return ac.received
}

// visit calls f with the event being built, under the lock, when the
// request is audited; it does nothing otherwise (or on a nil Context).
func (ac *Context) visit(f func(ev *auditv1.Event, rule RequestConfig)) {
	if ac == nil {
		return
	}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.event != nil {
		f(ac.event, ac.rule)
	}
}

// Level is the level the request is audited at (None when it is not).
func (ac *Context) Level() auditv1.Level {
	level := auditv1.LevelNone
	ac.visit(func(_ *auditv1.Event, rule RequestConfig) { level = rule.Level })
	return level
}

// AddAuditAnnotation implements request.AuditAnnotator: the first value of
// a key stays, as in kube.
func (ac *Context) AddAuditAnnotation(key, value string) {
	ac.visit(func(ev *auditv1.Event, _ RequestConfig) {
		if ev.Annotations == nil {
			ev.Annotations = map[string]string{}
		}
		if _, ok := ev.Annotations[key]; !ok {
			ev.Annotations[key] = value
		}
	})
}

// AddAuditAnnotationAtLevel is AddAuditAnnotation for an annotation kube
// records only when the request is audited at level or above (a mutating
// webhook's patch, at Request: it may hold the object's data).
func (ac *Context) AddAuditAnnotationAtLevel(key, value string, level auditv1.Level) {
	if levelOrder(ac.Level()) < levelOrder(level) {
		return
	}
	ac.AddAuditAnnotation(key, value)
}

// levelOrder orders the audit levels from None to RequestResponse.
func levelOrder(l auditv1.Level) int {
	switch l {
	case auditv1.LevelMetadata:
		return 1
	case auditv1.LevelRequest:
		return 2
	case auditv1.LevelRequestResponse:
		return 3
	}
	return 0
}

// LogImpersonatedUser records the user a request acts as. constraint is
// the verb of the constrained-impersonation mode that allowed it ("" for
// the legacy impersonate verb).
func (ac *Context) LogImpersonatedUser(u user.Info, constraint string) {
	ac.visit(func(ev *auditv1.Event, _ RequestConfig) {
		ui := userInfo(u)
		ev.ImpersonatedUser = &ui
		if constraint != "" {
			ev.AuthenticationMetadata = &auditv1.AuthenticationMetadata{ImpersonationConstraint: constraint}
		}
	})
}

// userInfo is u as audit events write it.
func userInfo(u user.Info) authnv1.UserInfo {
	ui := authnv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	if extra := u.GetExtra(); extra != nil {
		ui.Extra = make(map[string]authnv1.ExtraValue, len(extra))
		for k, v := range extra {
			ui.Extra[k] = authnv1.ExtraValue(v)
		}
	}
	return ui
}

// uid is the audit ID as the event types hold it.
func (ac *Context) uid() types.UID { return types.UID(ac.id) }
