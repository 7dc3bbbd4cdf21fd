package externalauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// decideByUser is the test webhook's policy: allowed-user may do
// everything, denied-user nothing (Deny: RBAC is not asked), the webhook
// fails for broken-user (no opinion: RBAC decides), and has no opinion of
// anyone else.
func decideByUser(r *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
	switch r.Spec.User {
	case "allowed-user":
		return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "allowed by the test"}
	case "denied-user":
		return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "denied by the test"}
	case "broken-user":
		return http.StatusInternalServerError, authorizationv1.SubjectAccessReviewStatus{}
	}
	return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Reason: "no opinion of the test"}
}

// TestWebhookMode runs --authorization-mode=Webhook,RBAC with the
// webhook's flags: the webhook's Allow and Deny decide, its errors and
// its lack of opinion leave the decision to RBAC, and its answers are
// reused for the cache's TTLs (allowed and denied alike, errors never).
func TestWebhookMode(t *testing.T) {
	t.Parallel()
	w := startAuthzWebhook(t, decideByUser)
	srv := testserver.Start(t, func(o *app.Options) {
		o.Auth.AuthorizationModes = []string{"Webhook", "RBAC"}
		o.Auth.Authorization.WebhookConfigFile = w.kubeconfig(t)
		o.Auth.Authorization.WebhookVersion = "v1"
	})
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	// RBAC lets broken-user and quiet-user read namespaces.
	for _, name := range []string{"broken-user", "quiet-user"} {
		_, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "view-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	// One certificate a user: the review's extra names the credential
	// (its fingerprint), so that a new certificate is a new review.
	clients := map[string]kubernetes.Interface{}
	for _, user := range []string{"allowed-user", "denied-user", "broken-user", "quiet-user"} {
		clients[user] = kubernetes.NewForConfigOrDie(srv.ClientConfigFor(t, user, "webhook-testers"))
	}
	listNamespaces := func(user string) error {
		_, err := clients[user].CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		return err
	}
	listSecrets := func(user string) error {
		_, err := clients[user].CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
		return err
	}

	t.Run("allowed", func(t *testing.T) {
		for range 3 {
			if err := listNamespaces("allowed-user"); err != nil {
				t.Fatal(err)
			}
		}
		if n := w.calls("allowed-user", "namespaces"); n != 1 {
			t.Errorf("the webhook was asked %d times, want once (the answer cached for 5m)", n)
		}
		r, _ := w.last("allowed-user")
		ra := r.Spec.ResourceAttributes
		if r.APIVersion != "authorization.k8s.io/v1" || ra == nil || ra.Verb != "list" || ra.Resource != "namespaces" || ra.Version != "v1" ||
			!slices.Equal(r.Spec.Groups, []string{"webhook-testers", "system:authenticated"}) {
			t.Errorf("review %s %+v", r.APIVersion, r.Spec)
		}
	})
	t.Run("denied", func(t *testing.T) {
		for range 2 {
			err := listNamespaces("denied-user")
			if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), `cannot list resource "namespaces" in API group "" at the cluster scope: denied by the test`) {
				t.Fatalf("got %v, want 403 with the webhook's reason", err)
			}
		}
		if n := w.calls("denied-user", "namespaces"); n != 1 {
			t.Errorf("the webhook was asked %d times, want once (the answer cached for 30s)", n)
		}
	})
	t.Run("error then RBAC", func(t *testing.T) {
		// 500 is retried with kube's backoff (five attempts, ~4 s), then
		// the webhook has no opinion and RBAC allows.
		if err := listNamespaces("broken-user"); err != nil {
			t.Fatalf("RBAC should decide when the webhook fails: %v", err)
		}
		if n := w.calls("broken-user", "namespaces"); n != 5 {
			t.Errorf("the webhook was asked %d times, want 5 (kube's retries)", n)
		}
	})
	t.Run("no opinion then RBAC", func(t *testing.T) {
		if err := listNamespaces("quiet-user"); err != nil {
			t.Fatal(err)
		}
		err := listSecrets("quiet-user")
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no opinion of the test") {
			t.Errorf("got %v, want 403 with the webhook's reason among the no-opinion reasons", err)
		}
	})
}

// TestWebhookVersionV1beta1 checks the flags' default review version,
// v1beta1 (as kube's), whose groups are "group", and its answer.
func TestWebhookVersionV1beta1(t *testing.T) {
	t.Parallel()
	var sawGroup atomic.Bool
	ws := testserver.StartWebhookServer(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var review struct {
			APIVersion string `json:"apiVersion"`
			Spec       struct {
				User  string   `json:"user"`
				Group []string `json:"group"`
			} `json:"spec"`
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.APIVersion != "authorization.k8s.io/v1beta1" {
			http.Error(rw, "not a v1beta1 review", http.StatusBadRequest)
			return
		}
		sawGroup.Store(slices.Contains(review.Spec.Group, "g1"))
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","status":{"allowed":%t}}`, review.Spec.User == "allowed-user")
	}))
	srv := testserver.Start(t, func(o *app.Options) {
		o.Auth.AuthorizationModes = []string{"Webhook"}
		o.Auth.Authorization.WebhookConfigFile = webhookKubeconfig(t, ws)
	})
	ctx := context.Background()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfigFor(t, "allowed-user", "g1"))
	if _, err := c.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !sawGroup.Load() {
		t.Error("the v1beta1 review has no spec.group with the user's group")
	}
	c = kubernetes.NewForConfigOrDie(srv.ClientConfigFor(t, "other-user"))
	if _, err := c.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("got %v, want 403", err)
	}
}
