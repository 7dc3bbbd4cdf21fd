// Command record-rbac-policy records kube-apiserver's bootstrap RBAC
// policy (every role and binding labelled
// kubernetes.io/bootstrapping=rbac-defaults) from a running reference
// kube-apiserver into the data file miniapiserver reconciles at start
// (pkg/registry/rbac/bootstrap/policy.json). The file says which version
// it came from. The policy is data the reference serves, not kube's code.
//
// Start the reference with RBAC and no controller-manager (so aggregated
// roles are as kube creates them: an aggregation rule, no rules), then:
//
//	PEER_STATE=/tmp/peer/state-x KUBE_AUTHZ_MODE=Node,RBAC eval "$(/work/shared/reference-kube/start-kube.sh)"
//	go run ./hack/record-rbac-policy -server "$PEER_URL" -token "$PEER_TOKEN"
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/bootstrap"
)

func main() {
	server := flag.String("server", "", "URL of the reference kube-apiserver")
	token := flag.String("token", "", "a bearer token of a user in system:masters")
	out := flag.String("out", "pkg/registry/rbac/bootstrap/policy.json", "file to write")
	flag.Parse()
	if err := run(*server, *token, *out); err != nil {
		fmt.Fprintln(os.Stderr, "record-rbac-policy:", err)
		os.Exit(1)
	}
}

func run(server, token, out string) error {
	client, err := kubernetes.NewForConfig(&rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		return err
	}
	ctx := context.Background()
	version, err := client.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	opts := metav1.ListOptions{LabelSelector: "kubernetes.io/bootstrapping=rbac-defaults"}
	rbac := client.RbacV1()
	p := bootstrap.Policy{Source: fmt.Sprintf("kube-apiserver %s, recorded by hack/record-rbac-policy", version.GitVersion)}
	crs, err := rbac.ClusterRoles().List(ctx, opts)
	if err != nil {
		return err
	}
	for _, r := range crs.Items {
		p.ClusterRoles = append(p.ClusterRoles, rbacv1.ClusterRole{ObjectMeta: clean(r.ObjectMeta), Rules: r.Rules, AggregationRule: r.AggregationRule})
	}
	crbs, err := rbac.ClusterRoleBindings().List(ctx, opts)
	if err != nil {
		return err
	}
	for _, b := range crbs.Items {
		p.ClusterRoleBindings = append(p.ClusterRoleBindings, rbacv1.ClusterRoleBinding{ObjectMeta: clean(b.ObjectMeta), RoleRef: b.RoleRef, Subjects: b.Subjects})
	}
	roles, err := rbac.Roles("").List(ctx, opts)
	if err != nil {
		return err
	}
	for _, r := range roles.Items {
		p.Roles = append(p.Roles, rbacv1.Role{ObjectMeta: clean(r.ObjectMeta), Rules: r.Rules})
	}
	rbs, err := rbac.RoleBindings("").List(ctx, opts)
	if err != nil {
		return err
	}
	for _, b := range rbs.Items {
		p.RoleBindings = append(p.RoleBindings, rbacv1.RoleBinding{ObjectMeta: clean(b.ObjectMeta), RoleRef: b.RoleRef, Subjects: b.Subjects})
	}
	sortPolicy(&p)
	data, err := json.MarshalIndent(&p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(data, '\n'), 0o644)
}

// clean keeps what the policy defines: the name, namespace, labels and
// annotations.
func clean(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations}
}

func sortPolicy(p *bootstrap.Policy) {
	sort.Slice(p.ClusterRoles, func(i, j int) bool { return p.ClusterRoles[i].Name < p.ClusterRoles[j].Name })
	sort.Slice(p.ClusterRoleBindings, func(i, j int) bool { return p.ClusterRoleBindings[i].Name < p.ClusterRoleBindings[j].Name })
	key := func(m metav1.ObjectMeta) string { return m.Namespace + "/" + m.Name }
	sort.Slice(p.Roles, func(i, j int) bool { return key(p.Roles[i].ObjectMeta) < key(p.Roles[j].ObjectMeta) })
	sort.Slice(p.RoleBindings, func(i, j int) bool { return key(p.RoleBindings[i].ObjectMeta) < key(p.RoleBindings[j].ObjectMeta) })
}
