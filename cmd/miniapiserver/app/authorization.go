package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/clusterroleaggregation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/bootstrap"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Authorization is the server's authorizer (--authorization-mode or
// --authorization-config, then the extra authorizers of embedding
// programs), its rule resolver, and the cache of roles and bindings RBAC
// decides with.
type Authorization struct {
	Authorizer   authorizer.Authorizer
	RuleResolver authorizer.RuleResolver
	Policy       *rbacrules.Cache
	// nodeObjects are what the Node mode reads, bound to the stores once
	// the groups are built (bindNodeObjects).
	nodeObjects *lateNodeObjects
	// reloader reads --authorization-config again (nil: no file).
	reloader *authorizationReloader
}

// newAuthorization builds the chain of --authorization-config, or of
// --authorization-mode and the webhook flags (behind system:masters, see
// authz.New), and the union of its modes' rule resolvers, as
// kube-apiserver does. The policy cache is filled later, from the rbac
// group's stores (startRBAC).
func newAuthorization(o *Options) (*Authorization, error) {
	// The CEL environment of match conditions costs megabytes: only a
	// configuration file can have match conditions.
	var compiler authorizationcel.Compiler
	if o.Auth.Authorization.ConfigFile != "" {
		compiler = authorizationcel.NewDefaultCompiler()
	}
	cfg, data, err := o.Auth.authorizationConfiguration(compiler)
	if err != nil {
		return nil, err
	}
	cache := rbacrules.NewCache()
	nodeObjects := &lateNodeObjects{}
	b := &authorizerBuilder{extra: o.Auth.ExtraAuthorizers, compiler: compiler}
	required := sets.New[apiserverconfig.AuthorizerType]()
	for _, c := range cfg.Authorizers {
		switch authz.Mode(c.Type) {
		case authz.ModeRBAC:
			b.rbac = authz.NewRBAC(cache)
		case authz.ModeNode:
			rules, err := systemNodeRules()
			if err != nil {
				return nil, err
			}
			b.node = authz.NewNode(nodeObjects, rules)
		}
		if c.Type != apiserverconfig.TypeWebhook {
			required.Insert(c.Type)
		}
	}
	a, resolver, err := b.build(cfg)
	if err != nil {
		return nil, err
	}
	current := authz.NewReloadable(a, resolver)
	out := &Authorization{Authorizer: current, RuleResolver: current, Policy: cache, nodeObjects: nodeObjects}
	if f := o.Auth.Authorization.ConfigFile; f != "" {
		out.reloader = &authorizationReloader{
			file: f, interval: o.Auth.Authorization.reloadInterval(), builder: b, target: current,
			required: required, lastData: data, lastConfig: cfg,
		}
	}
	return out, nil
}

// systemNodeRules are the rules of kube's system:node cluster role, which
// the Node mode applies itself to the resources it does not subdivide,
// as kube's (bootstrappolicy.NodeRules).
func systemNodeRules() ([]rbacv1.PolicyRule, error) {
	p, err := bootstrap.Load()
	if err != nil {
		return nil, err
	}
	for _, r := range p.ClusterRoles {
		if r.Name == "system:node" {
			return r.Rules, nil
		}
	}
	return nil, errors.New("bootstrap policy: no system:node cluster role")
}

// lateNodeObjects forwards to the stores once they are built: the Node
// authorizer is built before the groups (whose reviews ask the chain), and
// reads their stores. Set before the server serves.
type lateNodeObjects struct{ authz.NodeObjects }

// bindNodeObjects hands the Node mode the stores it reads.
func (a *Authorization) bindNodeObjects(st *stores) {
	if a.nodeObjects == nil {
		return
	}
	a.nodeObjects.NodeObjects = authz.RegistryNodeObjects{
		Pods:                   st.core.Pods,
		PersistentVolumeClaims: st.core.PersistentVolumeClaims,
		PersistentVolumes:      st.core.PersistentVolumes,
		VolumeAttachments:      st.storage.VolumeAttachments,
		ResourceSlices:         st.resource.ResourceSlices,
		PodCertificateRequests: st.certificates.PodCertificateRequests,
	}
}

// rbacBootstrapCheck is kube's readiness check of the bootstrap policy.
const rbacBootstrapCheck = "poststarthook/rbac/bootstrap-roles"

// startRBAC reconciles kube's bootstrap policy into the rbac stores
// (retrying every second until it succeeds, as kube's post-start hook),
// then keeps the policy cache current from them, and (aggregate: the
// clusterrole-aggregation controller is on) aggregates cluster roles, as
// loops of the server's.
func (s *Server) startRBAC(a *Authorization, st rbac.GroupStorage, aggregate bool) {
	s.loops.Go(func(ctx context.Context) {
		if reconcileBootstrapPolicy(ctx, st) == nil {
			a.Policy.Run(ctx, st.PolicySources())
		}
	})
	if aggregate {
		s.loops.Go(clusterroleaggregation.New(a.Policy, st.ClusterRoles).Run)
	}
}

// rbacReadyCheck is ready once the policy cache has the reconciled
// bootstrap policy (see startRBAC): until then, RBAC may deny what the
// policy allows.
func rbacReadyCheck(a *Authorization) healthz.Check {
	return healthz.Check{Name: rbacBootstrapCheck, Fn: func(context.Context) error {
		select {
		case <-a.Policy.Synced():
			return nil
		default:
			return errors.New("the bootstrap RBAC policy is not reconciled yet")
		}
	}}
}

// reconcileBootstrapPolicy reconciles the policy until it succeeds or ctx
// ends.
func reconcileBootstrapPolicy(ctx context.Context, st rbac.GroupStorage) error {
	p, err := bootstrap.Load()
	if err != nil {
		return err
	}
	stores := bootstrap.Stores{Roles: st.Roles, ClusterRoles: st.ClusterRoles, RoleBindings: st.RoleBindings, ClusterRoleBindings: st.ClusterRoleBindings}
	if err := rest.WaitForStorageReadiness(ctx, st.Roles, st.ClusterRoles, st.RoleBindings, st.ClusterRoleBindings); err != nil {
		return err
	}
	for {
		start := time.Now()
		err := bootstrap.Reconcile(ctx, p, stores)
		if err == nil {
			slog.Debug("rbac: bootstrap policy reconciled", "took", time.Since(start))
			return nil
		}
		slog.Warn("rbac: reconciling the bootstrap policy; trying again", "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
