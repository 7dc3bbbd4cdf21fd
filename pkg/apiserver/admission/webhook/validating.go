package webhook

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Validating is kube's ValidatingAdmissionWebhook plugin: a
// handlers.Admission that calls, at once, every validating webhook the
// request concerns; the first refusal or failure (in the webhooks' order)
// refuses it.
type Validating struct{ dispatcher }

// NewValidating returns the plugin calling the validating webhooks of
// source; namespaces are read for namespaceSelectors.
func NewValidating(source *Source, namespaces rest.Getter) *Validating {
	return &Validating{newDispatcher(source, namespaces)}
}

// Validate implements handlers.Admission.
func (p *Validating) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if p.source.idle(p.source.validatingHooks()) {
		return nil
	}
	attr := attributes(ctx, a, obj)
	if ok, err := p.ready(ctx, attr); !ok {
		return err
	}
	v := versioned(attr)
	type call struct {
		hook       *hook
		invocation *invocation
		attributes *admission.VersionedAttributes
	}
	var calls []call
	for _, h := range p.source.validatingHooks() {
		invocation, hv, _, err := p.shouldCall(ctx, h, v)
		if err != nil {
			return err
		}
		if invocation != nil {
			calls = append(calls, call{h, invocation, hv})
		}
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.callOne(ctx, c.hook, callSite{index: i}, c.invocation, c.attributes)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// callOne calls one validating webhook and returns the request's error.
func (p *Validating) callOne(ctx context.Context, h *hook, at callSite, inv *invocation, v *admission.VersionedAttributes) error {
	began := time.Now()
	_, err := call(ctx, h, inv, v)
	p.source.metrics.observeCall(h, string(v.Attributes.GetOperation()), time.Since(began), err)
	if err == nil {
		return nil
	}
	reqErr, ignored := failed(ctx, h.failurePolicy, err)
	if ignored {
		slog.Warn("admission webhooks: failed calling webhook, failing open", "webhook", h.name, "error", err)
		failedOpen(ctx, p.source.metrics, h, at)
	}
	return reqErr
}

// ValidateConnect implements handlers.ConnectAdmission, as kube's plugin
// handles CONNECT: the webhooks whose rules name the operation (or "*")
// are called with the request's options (a PodExecOptions, say) as the
// object, no old object and no options. An objectSelector that selects
// anything never matches them: options have no labels.
func (p *Validating) ValidateConnect(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	return p.Validate(ctx, a, obj)
}
