// Package authz holds the authorizers of --authorization-mode, as kube's:
// RBAC (over the registry's policy cache), Node, AlwaysAllow and
// AlwaysDeny, behind the system:masters superuser group, joined in a
// union whose first Allow or Deny wins. New builds the server's
// authorizer and rule resolver from the modes.
//
// Layers: apiserver -> registry. It reads roles and bindings from the
// policy cache (pkg/registry/rbac/policy), never from storage.
package authz
