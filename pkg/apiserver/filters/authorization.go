package filters

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// kube's audit annotations of an authorization decision.
const (
	decisionAnnotation = "authorization.k8s.io/decision"
	reasonAnnotation   = "authorization.k8s.io/reason"
)

// WithAuthorization lets through the requests a allows for their user,
// and answers the others 403 with kube's Forbidden Status (an error of
// the authorizers is a 500). The decision and its reason are annotated
// on the audit event.
func WithAuthorization(h http.Handler, a authorizer.Authorizer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		attrs, err := AttributesFrom(ctx)
		if err != nil {
			internalError(w, r, err)
			return
		}
		decision, reason, err := a.Authorize(ctx, attrs)
		if decision == authorizer.DecisionAllow {
			request.AddAuditAnnotation(ctx, decisionAnnotation, "allow")
			request.AddAuditAnnotation(ctx, reasonAnnotation, reason)
			if err := authorizeUpgradeCreate(ctx, a, attrs); err != nil {
				handlers.WriteError(w, r, err)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		if err != nil {
			request.AddAuditAnnotation(ctx, reasonAnnotation, "internal error")
			internalError(w, r, err)
			return
		}
		request.AddAuditAnnotation(ctx, decisionAnnotation, "forbid")
		request.AddAuditAnnotation(ctx, reasonAnnotation, reason)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		handlers.WriteError(w, r, authz.Forbidden(attrs, reason))
	})
}

// AttributesFrom describes the request in ctx to an authorizer: its user
// and what its Info says it addresses (the selectors of a list or watch
// parsed into requirements), as kube's GetAuthorizerAttributes.
func AttributesFrom(ctx context.Context) (authorizer.Attributes, error) {
	info, ok := request.InfoFrom(ctx)
	if !ok {
		return nil, errors.New("no RequestInfo found in the context")
	}
	attrs := &authorizer.AttributesRecord{
		ResourceRequest: info.IsResourceRequest,
		Path:            info.Path,
		Verb:            info.Verb,
		APIGroup:        info.APIGroup,
		APIVersion:      info.APIVersion,
		Resource:        info.Resource,
		Subresource:     info.Subresource,
		Namespace:       info.Namespace,
		Name:            info.Name,
	}
	if u, ok := request.UserFrom(ctx); ok {
		attrs.User = u
	}
	if info.FieldSelector != "" {
		if sel, err := fields.ParseSelector(info.FieldSelector); err != nil {
			attrs.FieldSelectorParsingErr = err
		} else if reqs := sel.Requirements(); len(reqs) > 0 {
			attrs.FieldSelectorRequirements = reqs
		}
	}
	if info.LabelSelector != "" {
		if sel, err := labels.Parse(info.LabelSelector); err != nil {
			attrs.LabelSelectorParsingErr = err
		} else if reqs, _ := sel.Requirements(); len(reqs) > 0 {
			attrs.LabelSelectorRequirements = reqs
		}
	}
	return attrs, nil
}

// upgradeCreates are the subresources a GET of which (a WebSocket
// upgrade) starts what a POST does: kube also authorizes it for create
// (AuthorizePodWebsocketUpgradeCreatePermission, on by default since
// 1.35), so that get on pods/exec does not let a user run commands.
var upgradeCreates = map[string]bool{"pods/exec": true, "pods/attach": true, "pods/portforward": true}

// authorizeUpgradeCreate is that second check, with kube's refusal.
func authorizeUpgradeCreate(ctx context.Context, a authorizer.Authorizer, attrs authorizer.Attributes) error {
	if !attrs.IsResourceRequest() || attrs.GetAPIGroup() != "" || attrs.GetVerb() == "create" ||
		!upgradeCreates[attrs.GetResource()+"/"+attrs.GetSubresource()] {
		return nil
	}
	decision, reason, err := a.Authorize(ctx, createAttributes{attrs})
	switch {
	case err != nil:
		return err
	case decision != authorizer.DecisionAllow:
		return apierrors.NewForbidden(schema.GroupResource{Resource: attrs.GetResource()}, attrs.GetName(), errors.New(reason))
	}
	return nil
}

// createAttributes are attributes with the verb create.
type createAttributes struct{ authorizer.Attributes }

func (createAttributes) GetVerb() string { return "create" }
