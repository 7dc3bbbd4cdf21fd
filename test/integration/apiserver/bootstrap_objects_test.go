package apiserver

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLegacyTokenTrackingConfigMap: the server records, as kube-apiserver
// does, since when it tracks legacy service account tokens: the day it
// first started (UTC, kube's date format), which kube-controller-manager's
// legacy token cleaner reads. A date that no longer parses is given the
// day's again, by the controller that keeps it.
func TestLegacyTokenTrackingConfigMap(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm, err := clientset(t).CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "kube-apiserver-legacy-service-account-token-tracking", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	since, err := time.Parse("2006-01-02", cm.Data["since"])
	if err != nil {
		t.Fatalf("since %q: %v", cm.Data["since"], err)
	}
	if age := time.Since(since); age < 0 || age > 48*time.Hour {
		t.Errorf("since %s: not the day the server started", cm.Data["since"])
	}
	if len(cm.Data) != 1 {
		t.Errorf("data %v, want since alone", cm.Data)
	}

	configMaps := clientset(t).CoreV1().ConfigMaps(metav1.NamespaceSystem)
	cm.Data["since"] = "not a date"
	if _, err := configMaps.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		cm, err = configMaps.Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := time.Parse("2006-01-02", cm.Data["since"]); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("since %q: not repaired", cm.Data["since"])
		case <-time.After(50 * time.Millisecond):
		}
	}
}
