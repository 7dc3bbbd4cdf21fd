package core

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSecrets(t *testing.T) {
	ns := namespace(t)
	secrets := clientset(t).CoreV1().Secrets(ns)
	ctx := context.Background()

	s, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Generation: 5},
		StringData: map[string]string{"a": "b"}, Data: map[string][]byte{"c": []byte("d")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// stringData is folded into data; an untyped secret is Opaque; a
	// generation sent is kept (secrets do not track it).
	if s.Type != corev1.SecretTypeOpaque || string(s.Data["a"]) != "b" || string(s.Data["c"]) != "d" || s.StringData != nil || s.Generation != 5 {
		t.Fatalf("created: %+v", s)
	}

	t.Run("type is immutable", func(t *testing.T) {
		tls, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A PUT without type is defaulted to Opaque first, as in kube.
		tls.Type = ""
		_, err = secrets.Update(ctx, tls, metav1.UpdateOptions{})
		wantInvalid(t, err, `type: Invalid value: "Opaque": field is immutable`)
	})

	t.Run("immutable secrets", func(t *testing.T) {
		im, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "im"}, Immutable: ptr(true),
			Data: map[string][]byte{"x": []byte("1")}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		im.Data["x"] = []byte("2")
		im.Immutable = nil
		_, err = secrets.Update(ctx, im, metav1.UpdateOptions{})
		wantInvalid(t, err, "immutable: Forbidden: field is immutable when `immutable` is set", "data: Forbidden: field is immutable when `immutable` is set")
		// Metadata may still change.
		p, err := secrets.Patch(ctx, "im", types.MergePatchType, []byte(`{"metadata":{"labels":{"l":"v"}}}`), metav1.PatchOptions{})
		if err != nil || p.Labels["l"] != "v" {
			t.Fatalf("label an immutable secret: %v", err)
		}
	})

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			secret corev1.Secret
			want   []string
		}{
			{corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Type: corev1.SecretTypeTLS},
				[]string{"data[tls.crt]: Required value", "data[tls.key]: Required value"}},
			{corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sa"}, Type: corev1.SecretTypeServiceAccountToken},
				[]string{"metadata.annotations[kubernetes.io/service-account.name]: Required value"}},
			{corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("x")}},
				[]string{`data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character 'x' looking for beginning of value`}},
			{corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "k"}, Data: map[string][]byte{"bad key": nil}},
				[]string{`data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`}},
		}
		for _, tc := range cases {
			_, err := secrets.Create(ctx, &tc.secret, metav1.CreateOptions{})
			wantInvalid(t, err, tc.want...)
		}
	})

	t.Run("field selector on type", func(t *testing.T) {
		list, err := secrets.List(ctx, metav1.ListOptions{FieldSelector: "type=kubernetes.io/tls"})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "tls" {
			t.Fatalf("list: %v %+v", err, list)
		}
		r := do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/secrets?fieldSelector=data%3Dx", nil)
		if r.code != http.StatusBadRequest || !strings.Contains(string(r.body), "field label not supported: data") {
			t.Errorf("unknown field: %d %s", r.code, r.body)
		}
	})

	t.Run("table", func(t *testing.T) {
		columns, rows := tableRows(t, "/api/v1/namespaces/"+ns+"/secrets/s")
		if got := fmt.Sprint(columns, rows[0][:3]); got != "[Name Type Data Age] [s Opaque 2]" {
			t.Errorf("table: %s", got)
		}
	})
}
