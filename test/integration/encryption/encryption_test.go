// Package encryption tests encryption at rest through the real HTTP API:
// what etcd holds for an encrypted resource, key rotation across
// restarts, and values kube-apiserver 1.37.2 wrote.
package encryption

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

const (
	key1 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	key2 = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVowMTIzNDU="
)

func config(t *testing.T, dir string, providers ...string) string {
	t.Helper()
	body := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n"
	for _, p := range providers {
		body += "  - " + p + "\n"
	}
	path := filepath.Join(dir, "encryption-"+time.Now().Format("150405.000000000")+".yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func aescbc(name, secret string) string {
	return "aescbc: {keys: [{name: " + name + ", secret: " + secret + "}]}"
}

// server starts (or restarts) a server on dir's data with an encryption
// configuration.
func server(t *testing.T, dir, configPath string) (*testserver.TestServer, *kubernetes.Clientset) {
	t.Helper()
	ts, err := testserver.New(dir, func(o *app.Options) { o.EncryptionProviderConfig = configPath })
	if err != nil {
		t.Fatal(err)
	}
	return ts, kubernetes.NewForConfigOrDie(ts.ClientConfig)
}

// stored reads what etcd holds at key.
func stored(t *testing.T, srv *app.Server, key string) []byte {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.EtcdURL}, TLS: srv.EtcdTLS, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd get %s: %v %v", key, err, resp)
	}
	return resp.Kvs[0].Value
}

func put(t *testing.T, srv *app.Server, key string, value []byte) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.EtcdURL}, TLS: srv.EtcdTLS, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Put(context.Background(), key, string(value)); err != nil {
		t.Fatal(err)
	}
}

func secret(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"password": []byte("hunter2")}}
}

func wantPrefix(t *testing.T, what string, value []byte, prefix string) {
	t.Helper()
	if !bytes.HasPrefix(value, []byte(prefix)) {
		t.Errorf("%s: etcd holds %.60q, want the prefix %q", what, value, prefix)
	}
	if prefix != "{" && (bytes.Contains(value, []byte("aHVudGVyMg==")) || bytes.Contains(value, []byte(`"kind"`))) {
		t.Errorf("%s: etcd holds plaintext: %q", what, value)
	}
}

// TestEncryptionAtRest: Secrets are stored encrypted with kube's prefix
// and read back through the API (get, list, watch); other resources are
// not; rotating keys by reordering keeps old values readable and an
// update rewrites them with the new key; identity first stops encrypting.
func TestEncryptionAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	ts, c := server(t, dir, config(t, dir, aescbc("key1", key1), "identity: {}"))
	srv := ts.Server
	ns := ts.CreateNamespace(t)
	secrets := c.CoreV1().Secrets(ns)
	w, err := secrets.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Create(ctx, secret("old"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := <-w.ResultChan()
	if s, ok := ev.Object.(*corev1.Secret); !ok || string(s.Data["password"]) != "hunter2" {
		t.Errorf("watched %v %#v", ev.Type, ev.Object)
	}
	w.Stop()
	wantPrefix(t, "a secret", stored(t, srv, "/registry/secrets/"+ns+"/old"), "k8s:enc:aescbc:v1:key1:")
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantPrefix(t, "a config map", stored(t, srv, "/registry/configmaps/"+ns+"/plain"), "k8s\x00") // kube's protobuf, unencrypted
	list, err := secrets.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || string(list.Items[0].Data["password"]) != "hunter2" {
		t.Fatalf("list: %v %+v", err, list)
	}
	ts.Server.Stop()

	// Rotation: the new key first, the old one still read.
	ts, c = server(t, dir, config(t, dir, "aescbc: {keys: [{name: key2, secret: "+key2+"}, {name: key1, secret: "+key1+"}]}"))
	secrets = c.CoreV1().Secrets(ns)
	old, err := secrets.Get(ctx, "old", metav1.GetOptions{})
	if err != nil || string(old.Data["password"]) != "hunter2" {
		t.Fatalf("old secret after rotation: %v %+v", err, old)
	}
	if _, err := secrets.Create(ctx, secret("new"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantPrefix(t, "a new secret", stored(t, srv, "/registry/secrets/"+ns+"/new"), "k8s:enc:aescbc:v1:key2:")
	// An update that changes nothing still rewrites a value of an old key.
	if _, err := secrets.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantPrefix(t, "a rewritten secret", stored(t, srv, "/registry/secrets/"+ns+"/old"), "k8s:enc:aescbc:v1:key2:")
	ts.Server.Stop()

	// The old key is gone; identity first decrypts as values are written.
	ts, c = server(t, dir, config(t, dir, "identity: {}", aescbc("key2", key2)))
	defer ts.Server.Stop()
	secrets = c.CoreV1().Secrets(ns)
	for _, name := range []string{"old", "new"} {
		if s, err := secrets.Get(ctx, name, metav1.GetOptions{}); err != nil || string(s.Data["password"]) != "hunter2" {
			t.Errorf("%s with key2 only: %v %+v", name, err, s)
		}
	}
	if _, err := secrets.Create(ctx, secret("plain"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantPrefix(t, "a secret after decryption", stored(t, srv, "/registry/secrets/"+ns+"/plain"), "k8s\x00")
}

// TestKubeWrittenSecret: a Secret kube-apiserver 1.37.2 encrypted
// (aescbc, recorded with the same configuration), put in this server's
// etcd, is read through the API.
func TestKubeWrittenSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kubeConfig, err := filepath.Abs("../../../pkg/storage/value/testdata/kube-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../../pkg/storage/value/testdata/kube-values.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Values map[string]string `json:"values"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	const key = "/registry/secrets/default/enc-test"
	value, err := base64.StdEncoding.DecodeString(golden.Values[key])
	if err != nil || !strings.HasPrefix(string(value), "k8s:enc:aescbc:v1:key1:") {
		t.Fatalf("golden value: %v %.30q", err, value)
	}
	ts, c := server(t, dir, kubeConfig)
	defer ts.Server.Stop()
	put(t, ts.Server, key, value)
	s, err := c.CoreV1().Secrets("default").Get(context.Background(), "enc-test", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != "hunter2" {
		t.Fatalf("kube's secret: %v %+v", err, s)
	}
}

// TestKubeWrittenProtobufSecret: kube-apiserver's default stored form of
// an encrypted Secret, its protobuf envelope encrypted (aescbc), is
// read through the API: decrypted, then decoded.
func TestKubeWrittenProtobufSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kubeConfig, err := filepath.Abs("../../../pkg/storage/value/testdata/kube-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	transformers, err := value.LoadConfig(kubeConfig)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "enc-proto", Namespace: "default", UID: "uid-enc-proto", CreationTimestamp: metav1.Now()},
		Data:       map[string][]byte{"password": []byte("hunter2")}, Type: corev1.SecretTypeOpaque}
	var plain bytes.Buffer
	if err := protobuf.NewSerializer(api.Scheme(), api.Scheme()).Encode(secret, &plain); err != nil {
		t.Fatal(err)
	}
	const key = "/registry/secrets/default/enc-proto"
	stored, err := transformers.For(corev1.Resource("secrets")).TransformToStorage(context.Background(), plain.Bytes(), key)
	if err != nil || !strings.HasPrefix(string(stored), "k8s:enc:aescbc:v1:key1:") {
		t.Fatalf("encrypting: %v %.30q", err, stored)
	}
	ts, c := server(t, dir, kubeConfig)
	defer ts.Server.Stop()
	put(t, ts.Server, key, stored)
	s, err := c.CoreV1().Secrets("default").Get(context.Background(), "enc-proto", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != "hunter2" {
		t.Fatalf("kube's protobuf secret: %v %+v", err, s)
	}
}
