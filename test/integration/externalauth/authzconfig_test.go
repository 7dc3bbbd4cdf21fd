package externalauth

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// authorizationConfig is an AuthorizationConfiguration with one webhook
// (asked only when its match condition holds; its failures deny) before
// RBAC.
func authorizationConfig(kubeconfig, matchCondition string) string {
	return fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: secrets-guard
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    authorizedTTL: 1m
    unauthorizedTTL: 1m
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: %s
    matchConditions:
    - expression: has(request.resourceAttributes)
    - expression: %q
- type: RBAC
  name: rbac
`, kubeconfig, matchCondition)
}

// TestAuthorizationConfig runs --authorization-config: a webhook asked
// only about what its match conditions select, its failure policy Deny,
// RBAC for the rest, and the file read again when it changes.
func TestAuthorizationConfig(t *testing.T) {
	t.Parallel()
	w := startAuthzWebhook(t, func(r *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
		if r.Spec.User == "broken-user" {
			return http.StatusBadRequest, authorizationv1.SubjectAccessReviewStatus{}
		}
		return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Allowed: r.Spec.User == "allowed-user", Reason: "secrets-guard says so"}
	})
	kubeconfig := w.kubeconfig(t)
	file := writeFile(t, "authz.yaml", authorizationConfig(kubeconfig, "request.resourceAttributes.resource == 'secrets'"))
	srv := testserver.Start(t, func(o *app.Options) {
		o.Auth.Authorization.ConfigFile = file
		o.Auth.Authorization.ConfigReloadInterval = 100 * time.Millisecond
	})
	ctx := context.Background()
	client := func(user string) kubernetes.Interface {
		return kubernetes.NewForConfigOrDie(srv.ClientConfigFor(t, user))
	}
	allowed, other, broken := client("allowed-user"), client("other-user"), client("broken-user")

	if _, err := allowed.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the webhook allows secrets: %v", err)
	}
	_, err := other.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "secrets-guard says so") {
		t.Errorf("got %v, want 403 with the webhook's reason", err)
	}
	// Configmaps do not match: the webhook is not asked, RBAC refuses.
	if _, err := allowed.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("configmaps: got %v, want 403 from RBAC", err)
	}
	if n := w.calls("allowed-user", "configmaps"); n != 0 {
		t.Errorf("the webhook was asked about configmaps %d times; its match conditions exclude them", n)
	}
	// failurePolicy Deny: a failed call (400, not retried) denies, with
	// the error, which kube's authorization filter answers with 500.
	_, err = broken.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "the server rejected our request for an unknown reason") {
		t.Errorf("got %v, want 500 with the webhook's error (failurePolicy: Deny)", err)
	}
	// The admin, in system:masters, is never asked about.
	if _, err := kubernetes.NewForConfigOrDie(srv.ClientConfig).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	// A new file: the webhook now decides configmaps too.
	if err := os.WriteFile(file, []byte(authorizationConfig(kubeconfig, "request.resourceAttributes.resource in ['secrets', 'configmaps']")), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reloaded configuration", func() error {
		_, err := allowed.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err
	})
	// A file that is not valid leaves the chain in force.
	if err := os.WriteFile(file, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := allowed.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("an invalid file replaced the chain: %v", err)
	}
}
