package apiserver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTypedClientCRUD(t *testing.T) {
	client := clientset(t)
	ns := namespace(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	created, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.Data["k"] != "v" {
		t.Fatalf("created: %+v", created)
	}
	got, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get: %v %+v", err, got)
	}
	list, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %+v", err, list)
	}
	got.Data["k"] = "w"
	updated, err := client.CoreV1().ConfigMaps(ns).Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "w" {
		t.Fatalf("update: %v %+v", err, updated)
	}
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
