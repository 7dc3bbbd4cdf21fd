package authz

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestClusterRoleAggregation: an aggregated cluster role holds the rules
// of the roles its selectors match, kept up to date in process as kube's
// controller-manager does it (and in its name), including kube's own
// view, which a labelled role extends.
func TestClusterRoleAggregation(t *testing.T) {
	t.Parallel()
	ns := namespace(t) // names this test's cluster objects
	ctx := context.Background()
	roles := admin(t).RbacV1().ClusterRoles()
	label := map[string]string{"aggregation-test.example.com/" + ns: "true"}
	agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-agg"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: label}}}}
	part1 := cluster(ns+"-a", label, rules([]string{"get"}, "", []string{"configmaps"}), rules([]string{"list"}, "", []string{"secrets"}))
	part2 := cluster(ns+"-b", label, rules([]string{"list"}, "", []string{"secrets"}), rules([]string{"watch"}, "apps", []string{"deployments"}))
	toView := cluster(ns+"-view", map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}, rules([]string{"get"}, ns+".example.com", []string{"gadgets"}))
	for _, r := range []*rbacv1.ClusterRole{agg, part1, part2, toView} {
		if _, err := roles.Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = roles.Delete(ctx, r.Name, metav1.DeleteOptions{}) })
	}
	wantRules := func(name string, want []rbacv1.PolicyRule) func() error {
		return func() error {
			got, err := roles.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !apiequality.Semantic.DeepEqual(got.Rules, want) {
				return fmt.Errorf("%s has rules %v, want %v", name, got.Rules, want)
			}
			return nil
		}
	}
	// Roles by name, each rule once, in order.
	eventually(t, "aggregated", wantRules(agg.Name, []rbacv1.PolicyRule{part1.Rules[0], part1.Rules[1], part2.Rules[1]}))
	got, err := roles.Get(ctx, agg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := got.ManagedFields; len(m) == 0 || m[0].Manager != "clusterrole-aggregation-controller" || m[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("managed fields %+v, want an Apply by clusterrole-aggregation-controller first", m)
	}
	// view aggregates into edit, edit into admin.
	for _, name := range []string{"view", "edit", "admin"} {
		eventually(t, name+" extended", func() error {
			r, err := roles.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, rule := range r.Rules {
				if apiequality.Semantic.DeepEqual(rule, toView.Rules[0]) {
					return nil
				}
			}
			return fmt.Errorf("%s lacks %v", name, toView.Rules[0])
		})
	}
	// A part leaves: its rules go.
	if _, err := roles.Patch(ctx, part1.Name, types.MergePatchType, []byte(`{"metadata":{"labels":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a part removed", wantRules(agg.Name, part2.Rules))
	// Someone else changes the rules: they are put back.
	if _, err := roles.Patch(ctx, agg.Name, types.MergePatchType, []byte(`{"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rules restored", wantRules(agg.Name, part2.Rules))
}
