package authz

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// sanitizer escapes what kube escapes in a Forbidden message.
var sanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// Forbidden is the 403 Status of a refused request, in kube's words:
//
//	secrets "s" is forbidden: User "jane" cannot get resource "secrets" in API group "" in the namespace "y": REASON
//	nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope
//	forbidden: User "jane" cannot get path "/healthz"
//
// The reason, when the authorizers gave one, ends the message.
func Forbidden(a authorizer.Attributes, reason string) *apierrors.StatusError {
	msg := sanitizer.Replace(forbiddenMessage(a))
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.GetAPIGroup(), Resource: a.GetResource()}
	return apierrors.NewForbidden(gr, a.GetName(), fmt.Errorf("%s", msg))
}

func forbiddenMessage(a authorizer.Attributes) string {
	username := ""
	if u := a.GetUser(); u != nil {
		username = u.GetName()
	}
	if !a.IsResourceRequest() {
		return fmt.Sprintf("User %q cannot %s path %q", username, a.GetVerb(), a.GetPath())
	}
	resource := a.GetResource()
	if sub := a.GetSubresource(); sub != "" {
		resource += "/" + sub
	}
	if ns := a.GetNamespace(); ns != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", username, a.GetVerb(), resource, a.GetAPIGroup(), ns)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", username, a.GetVerb(), resource, a.GetAPIGroup())
}

// Check asks a whether attrs are allowed, and returns the Forbidden
// Status when not: the authorizer's error joins its reason, as kube's
// checks of impersonation and token requests word it.
func Check(ctx context.Context, a authorizer.Authorizer, attrs authorizer.Attributes) error {
	decision, reason, err := a.Authorize(ctx, attrs)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	if apierrors.IsForbidden(err) {
		return err
	}
	msg := reason
	switch {
	case err != nil && reason != "":
		msg = fmt.Sprintf("%v: %s", err, reason)
	case err != nil:
		msg = err.Error()
	}
	return Forbidden(attrs, msg)
}
