package route

import "testing"

func TestOperationIDAndTags(t *testing.T) {
	cases := []struct {
		operation, path, wantID, wantTag string
	}{
		{"listNamespacedConfigMap", "/api/v1/namespaces/{namespace}/configmaps", "listCoreV1NamespacedConfigMap", "core_v1"},
		{"createNamespacedDeployment", "/apis/apps/v1/namespaces/{namespace}/deployments", "createAppsV1NamespacedDeployment", "apps_v1"},
		{"patchNamespacedPodStatus", "/api/v1/namespaces/{namespace}/pods/{name}/status", "patchCoreV1NamespacedPodStatus", "core_v1"},
		{"deletecollectionNamespacedLease", "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", "deleteCoordinationV1CollectionNamespacedLease", "coordination_v1"},
		{"getAPIVersions", "/api/", "getCoreAPIVersions", "core"},
		{"getAPIGroup", "/apis/apps/", "getAppsAPIGroup", "apps"},
		{"getCodeVersion", "/version/", "getCodeVersion", "version"},
	}
	for _, tc := range cases {
		t.Run(tc.wantID, func(t *testing.T) {
			id, tags, err := OperationIDAndTags(&Route{Operation: tc.operation, URL: tc.path})
			if err != nil {
				t.Fatal(err)
			}
			if id != tc.wantID || len(tags) != 1 || tags[0] != tc.wantTag {
				t.Errorf("got %s %v, want %s [%s]", id, tags, tc.wantID, tc.wantTag)
			}
		})
	}
	if _, _, err := OperationIDAndTags(&Route{Operation: "frobnicate", URL: "/api/v1"}); err == nil {
		t.Error("an operation that starts with no verb: want an error")
	}
}

func TestArticleFor(t *testing.T) {
	for noun, want := range map[string]string{"Pod": " a ", "Endpoints": " ", "Ingress": " an ", "Event": " an "} {
		if got := ArticleFor(noun); got != want {
			t.Errorf("%s: got %q, want %q", noun, got, want)
		}
	}
}
