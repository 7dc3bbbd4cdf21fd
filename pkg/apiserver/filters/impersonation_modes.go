package filters

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
)

// impersonationMode tries one way of allowing an impersonation: it
// returns the user to act as and the constraint verb that allowed it, or
// applies=false when the mode does not fit the wanted user.
type impersonationMode func(ctx context.Context, a authorizer.Authorizer, wanted *user.DefaultInfo, attrs authorizer.Attributes) (u *user.DefaultInfo, constraint string, applies bool, err error)

// impersonationModes are kube 1.37's, in its order: a service account may
// act as the node its pod runs on, then arbitrary nodes, service accounts
// and other users under constrained impersonation, then the legacy
// impersonate verb.
var impersonationModes = []impersonationMode{
	associatedNodeMode,
	constrainedMode("arbitrary-node", func(wanted *user.DefaultInfo, _ user.Info) bool {
		_, node := nodeUsername(wanted.Name)
		return onlyUsername(wanted) && node
	}),
	constrainedMode("serviceaccount", func(wanted *user.DefaultInfo, _ user.Info) bool {
		_, _, sa := serviceAccountUsername(wanted.Name)
		return onlyUsername(wanted) && sa
	}),
	constrainedMode("user-info", func(wanted *user.DefaultInfo, _ user.Info) bool {
		_, node := nodeUsername(wanted.Name)
		_, _, sa := serviceAccountUsername(wanted.Name)
		return !node && !sa
	}),
	legacyMode,
}

// impersonate returns the user the requestor of attrs may act as, or the
// error of the first mode that applied and refused.
func impersonate(ctx context.Context, a authorizer.Authorizer, wanted *user.DefaultInfo, attrs authorizer.Attributes) (*user.DefaultInfo, string, error) {
	var firstErr error
	for _, mode := range impersonationModes {
		u, constraint, applies, err := mode(ctx, a, wanted, attrs)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if applies {
			return u, constraint, nil
		}
	}
	if firstErr == nil {
		firstErr = errors.New("all impersonation modes failed")
	}
	return nil, "", firstErr
}

func legacyMode(ctx context.Context, a authorizer.Authorizer, wanted *user.DefaultInfo, attrs authorizer.Attributes) (*user.DefaultInfo, string, bool, error) {
	u, err := impersonationCheck{a: a, verb: "impersonate", gv: corev1.SchemeGroupVersion}.check(ctx, wanted, attrs.GetUser())
	return u, "", err == nil, err
}

// constrainedMode is a mode of constrained impersonation: where applies
// says it fits, the requestor needs impersonate-on:MODE:VERB on what the
// request does, and impersonate:MODE on the user it acts as.
func constrainedMode(mode string, applies func(wanted *user.DefaultInfo, requestor user.Info) bool) impersonationMode {
	return func(ctx context.Context, a authorizer.Authorizer, wanted *user.DefaultInfo, attrs authorizer.Attributes) (*user.DefaultInfo, string, bool, error) {
		if !applies(wanted, attrs.GetUser()) {
			return nil, "", false, nil
		}
		if err := authz.Check(ctx, a, &impersonateOnAttributes{mode: mode, Attributes: attrs}); err != nil {
			return nil, "", false, err
		}
		verb := "impersonate:" + mode
		u, err := impersonationCheck{a: a, verb: verb, gv: authenticationv1.SchemeGroupVersion, constrained: true}.check(ctx, wanted, attrs.GetUser())
		return u, verb, err == nil, err
	}
}

// associatedNodeMode lets a service account whose token is bound to a
// node act as that node: the authorizer sees a node name of "*" and, as
// the requestor's extras, only their keys.
func associatedNodeMode(ctx context.Context, a authorizer.Authorizer, wanted *user.DefaultInfo, attrs authorizer.Attributes) (*user.DefaultInfo, string, bool, error) {
	wrapped := authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
		if err := authz.Check(ctx, a, &associatedNodeAttributes{Attributes: attrs}); err != nil {
			return authorizer.DecisionDeny, "", err
		}
		return authorizer.DecisionAllow, "", nil
	})
	mode := constrainedMode("associated-node", func(wanted *user.DefaultInfo, requestor user.Info) bool {
		node, ok := nodeUsername(wanted.Name)
		if !ok || !onlyUsername(wanted) {
			return false
		}
		if _, _, sa := serviceAccountUsername(requestor.GetName()); !sa {
			return false
		}
		values := requestor.GetExtra()[serviceaccount.NodeNameKey]
		return len(values) == 1 && values[0] == node
	})
	return mode(ctx, wrapped, wanted, attrs)
}

// impersonateOnAttributes are a request's attributes under the verb
// impersonate-on:MODE:VERB.
type impersonateOnAttributes struct {
	mode string
	authorizer.Attributes
}

func (i *impersonateOnAttributes) GetVerb() string {
	return "impersonate-on:" + i.mode + ":" + i.Attributes.GetVerb()
}

type associatedNodeAttributes struct{ authorizer.Attributes }

func (a *associatedNodeAttributes) GetUser() user.Info {
	return associatedNodeRequestor{a.Attributes.GetUser()}
}

func (a *associatedNodeAttributes) GetName() string {
	if a.GetVerb() == "impersonate:associated-node" {
		return "*"
	}
	return a.Attributes.GetName()
}

type associatedNodeRequestor struct{ user.Info }

func (r associatedNodeRequestor) GetExtra() map[string][]string {
	return map[string][]string{"authentication.kubernetes.io/associated-node-keys": slices.Sorted(maps.Keys(r.Info.GetExtra()))}
}

// impersonationCheck authorizes the parts of a wanted user with one verb.
type impersonationCheck struct {
	a           authorizer.Authorizer
	verb        string
	gv          schema.GroupVersion // of users and groups
	constrained bool
}

// manyChecks is how many groups or extras make it worth asking for "*".
const manyChecks = 4

func (c impersonationCheck) check(ctx context.Context, wanted *user.DefaultInfo, requestor user.Info) (*user.DefaultInfo, error) {
	actual := &user.DefaultInfo{Name: wanted.Name, UID: wanted.UID, Groups: slices.Clone(wanted.Groups), Extra: wanted.Extra}
	if err := c.username(ctx, requestor, wanted, actual); err != nil {
		return nil, err
	}
	if wanted.UID != "" {
		if err := authz.Check(ctx, c.a, c.attributes(requestor, authenticationv1.SchemeGroupVersion, "uids", wanted.UID)); err != nil {
			return nil, err
		}
	}
	if err := c.groups(ctx, requestor, wanted.Groups); err != nil {
		return nil, err
	}
	if err := c.extra(ctx, requestor, wanted.Extra); err != nil {
		return nil, err
	}
	switch {
	case actual.Name == user.Anonymous:
		ensureGroup(actual, user.AllUnauthenticated)
	case !slices.Contains(actual.Groups, user.AllUnauthenticated):
		ensureGroup(actual, user.AllAuthenticated)
	}
	return actual, nil
}

func (c impersonationCheck) attributes(requestor user.Info, gv schema.GroupVersion, resource, name string) *authorizer.AttributesRecord {
	return &authorizer.AttributesRecord{User: requestor, Verb: c.verb, APIGroup: gv.Group, APIVersion: gv.Version,
		Resource: resource, Name: name, ResourceRequest: true}
}

// username authorizes the user name: a node (constrained modes) or a
// service account by its own resource, else users. A service account
// without groups asked gets its own groups; a node, system:nodes.
func (c impersonationCheck) username(ctx context.Context, requestor user.Info, wanted, actual *user.DefaultInfo) error {
	attrs := c.attributes(requestor, c.gv, "users", wanted.Name)
	if node, ok := nodeUsername(wanted.Name); ok && c.constrained {
		attrs.Resource, attrs.Name = "nodes", node
		if len(wanted.Groups) != 0 {
			return authz.Forbidden(attrs, fmt.Sprintf("when impersonating a node, cannot impersonate groups %q", wanted.Groups))
		}
		actual.Groups = []string{user.NodesGroup}
	}
	if ns, name, ok := serviceAccountUsername(wanted.Name); ok {
		attrs.Resource, attrs.Namespace, attrs.Name = "serviceaccounts", ns, name
		if c.constrained && len(wanted.Groups) != 0 {
			return authz.Forbidden(attrs, fmt.Sprintf("when impersonating a service account, cannot impersonate groups %q", wanted.Groups))
		}
		if len(wanted.Groups) == 0 {
			actual.Groups = serviceaccount.MakeGroupNames(ns)
		}
	}
	return authz.Check(ctx, c.a, attrs)
}

func (c impersonationCheck) groups(ctx context.Context, requestor user.Info, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	attrs := c.attributes(requestor, c.gv, "groups", "")
	if c.constrained {
		if slices.Contains(groups, "") {
			return authz.Forbidden(attrs, "impersonating the empty string group is not allowed")
		}
		if slices.Contains(groups, user.SystemPrivilegedGroup) {
			attrs.Name = user.SystemPrivilegedGroup
			return authz.Forbidden(attrs, "impersonating the system:masters group is not allowed")
		}
		if len(groups) >= manyChecks {
			attrs.Name = "*"
			if authz.Check(ctx, c.a, attrs) == nil {
				return nil
			}
		}
	}
	for _, g := range groups {
		attrs.Name = g
		if err := authz.Check(ctx, c.a, attrs); err != nil {
			return err
		}
	}
	return nil
}

func (c impersonationCheck) extra(ctx context.Context, requestor user.Info, extra map[string][]string) error {
	if len(extra) == 0 {
		return nil
	}
	attrs := c.attributes(requestor, authenticationv1.SchemeGroupVersion, "userextras", "")
	if c.constrained {
		if err := validateExtra(extra); err != nil {
			return authz.Forbidden(attrs, err.Error())
		}
		count := 0
		for _, v := range extra {
			count += len(v)
		}
		if len(extra) >= manyChecks || count >= manyChecks {
			attrs.Subresource, attrs.Name = "*", "*"
			if authz.Check(ctx, c.a, attrs) == nil {
				return nil
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(extra)) {
		attrs.Subresource = key
		for _, v := range extra[key] {
			attrs.Name = v
			if err := authz.Check(ctx, c.a, attrs); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateExtra is kube's check of impersonated extras under constrained
// impersonation.
func validateExtra(extra map[string][]string) error {
	for _, key := range slices.Sorted(maps.Keys(extra)) {
		values := extra[key]
		switch {
		case key == "":
			return errors.New("impersonating the empty string key in extra is not allowed")
		case len(utilvalidation.IsDomainPrefixedPath(field.NewPath("extra", "key"), key)) > 0:
			return fmt.Errorf("impersonating an invalid key in extra is not allowed: %w",
				utilvalidation.IsDomainPrefixedPath(field.NewPath("extra", "key"), key).ToAggregate())
		case key != strings.ToLower(key):
			return fmt.Errorf("impersonating a non-lowercase key in extra is not allowed: %q", key)
		case len(values) == 0:
			return errors.New("impersonating empty values in extra is not allowed")
		case slices.Contains(values, ""):
			return errors.New("impersonating the empty string value in extra is not allowed")
		}
	}
	return nil
}

func ensureGroup(u *user.DefaultInfo, group string) {
	if !slices.Contains(u.Groups, group) {
		u.Groups = append(slices.Clip(u.Groups), group)
	}
}

func onlyUsername(u *user.DefaultInfo) bool {
	return u.UID == "" && len(u.Groups) == 0 && len(u.Extra) == 0
}

func serviceAccountUsername(name string) (namespace, sa string, ok bool) {
	namespace, sa, err := serviceaccount.SplitUsername(name)
	return namespace, sa, err == nil
}

// nodeUsername reads system:node:NAME, NAME a valid node name.
func nodeUsername(name string) (string, bool) {
	node, ok := strings.CutPrefix(name, "system:node:")
	if !ok || len(validation.NameIsDNSSubdomain(node, false)) != 0 {
		return "", false
	}
	return node, true
}
