package value

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestKubeWrittenValues decrypts values kube-apiserver 1.37.2 wrote with
// the same configuration (one per provider): a cluster's encrypted data
// moves to this server as it is.
func TestKubeWrittenValues(t *testing.T) {
	transformers, err := LoadConfig("testdata/kube-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/kube-values.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Values map[string]string `json:"values"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/registry/secrets/default/enc-test":         `"password":"aHVudGVyMg=="`,
		"/registry/configmaps/default/enc-test":      `"color":"blue"`,
		"/registry/serviceaccounts/default/enc-test": `"name":"enc-test"`,
	}
	for key, contains := range want {
		stored, err := base64.StdEncoding.DecodeString(golden.Values[key])
		if err != nil {
			t.Fatal(err)
		}
		resource := strings.Split(key, "/")[2]
		plain, stale, err := transformers.For(schema.GroupResource{Resource: resource}).TransformFromStorage(context.Background(), stored, key)
		if err != nil || stale {
			t.Errorf("%s: %v (stale %v)", key, err, stale)
			continue
		}
		if !bytes.Contains(plain, []byte(contains)) {
			t.Errorf("%s decrypts to %s, want it to contain %s", key, plain, contains)
		}
		// And a value moved to another key does not decrypt with GCM,
		// which authenticates the key.
		if resource == "configmaps" {
			if _, _, err := transformers.For(schema.GroupResource{Resource: resource}).TransformFromStorage(context.Background(), stored, key+"-moved"); err == nil {
				t.Errorf("%s decrypts under another key", key)
			}
		}
	}
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	key32 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes
	key16 = "MDEyMzQ1Njc4OWFiY2RlZg=="                     // 16 bytes
	other = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVowMTIzNDU=" // 32 other bytes
)

// TestProvidersRoundTrip: each provider's values carry kube's prefix and
// the key's name, and read back.
func TestProvidersRoundTrip(t *testing.T) {
	for _, tc := range []struct{ provider, prefix string }{
		{"aescbc: {keys: [{name: k1, secret: " + key32 + "}]}", "k8s:enc:aescbc:v1:k1:"},
		{"aesgcm: {keys: [{name: k1, secret: " + key16 + "}]}", "k8s:enc:aesgcm:v1:k1:"},
		{"secretbox: {keys: [{name: k1, secret: " + key32 + "}]}", "k8s:enc:secretbox:v1:k1:"},
		{"identity: {}", "{"},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			tr, err := LoadConfig(writeConfig(t, "resources:\n- resources: [secrets]\n  providers:\n  - "+tc.provider+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			s := tr.For(schema.GroupResource{Resource: "secrets"})
			plain := []byte(`{"kind":"Secret"}`)
			stored, err := s.TransformToStorage(context.Background(), plain, "/registry/secrets/ns/a")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(stored, []byte(tc.prefix)) || tc.prefix != "{" && bytes.Contains(stored, []byte("Secret")) {
				t.Errorf("stored %q", stored)
			}
			got, stale, err := s.TransformFromStorage(context.Background(), stored, "/registry/secrets/ns/a")
			if err != nil || stale || !bytes.Equal(got, plain) {
				t.Errorf("read back %q %v %v", got, stale, err)
			}
			// Other resources are not encrypted.
			if tr.For(schema.GroupResource{Resource: "configmaps"}) != Identity {
				t.Errorf("configmaps are transformed")
			}
		})
	}
}

// TestKeyRotation: a new key first writes; values of the old key still
// read, as stale (an update rewrites them); once the old key is gone they
// no longer read; identity listed first stops encrypting but reads both.
func TestKeyRotation(t *testing.T) {
	ctx := context.Background()
	load := func(body string) Transformer {
		t.Helper()
		tr, err := LoadConfig(writeConfig(t, "resources:\n- resources: [secrets]\n  providers:\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		return tr.For(schema.GroupResource{Resource: "secrets"})
	}
	oldOnly := load("  - aescbc: {keys: [{name: old, secret: " + key32 + "}]}\n")
	rotated := load("  - aescbc: {keys: [{name: new, secret: " + other + "}, {name: old, secret: " + key32 + "}]}\n")
	newOnly := load("  - aescbc: {keys: [{name: new, secret: " + other + "}]}\n")
	decrypting := load("  - identity: {}\n  - aescbc: {keys: [{name: new, secret: " + other + "}]}\n")
	key := "/registry/secrets/ns/a"
	oldValue, _ := oldOnly.TransformToStorage(ctx, []byte("v"), key)
	if got, stale, err := rotated.TransformFromStorage(ctx, oldValue, key); err != nil || !stale || string(got) != "v" {
		t.Errorf("old value after rotation: %q %v %v", got, stale, err)
	}
	newValue, _ := rotated.TransformToStorage(ctx, []byte("v"), key)
	if !bytes.HasPrefix(newValue, []byte("k8s:enc:aescbc:v1:new:")) {
		t.Errorf("rotated writes %q", newValue)
	}
	if _, _, err := newOnly.TransformFromStorage(ctx, oldValue, key); err == nil || err.Error() != "no matching key was found for the provided AES transformer" {
		t.Errorf("old value without its key: %v", err)
	}
	if got, stale, err := decrypting.TransformFromStorage(ctx, newValue, key); err != nil || !stale || string(got) != "v" {
		t.Errorf("encrypted value behind identity: %q %v %v", got, stale, err)
	}
	if stored, _ := decrypting.TransformToStorage(ctx, []byte("v"), key); string(stored) != "v" {
		t.Errorf("identity first writes %q", stored)
	}
	// With no configuration, encrypted data is refused, as kube refuses it.
	if _, _, err := Identity.TransformFromStorage(ctx, newValue, key); err == nil || err.Error() != "identity transformer tried to read encrypted data" {
		t.Errorf("identity reading encrypted data: %v", err)
	}
}

// TestConfigErrors: kube-apiserver 1.37.2's messages for the same files
// (checked by starting it with them).
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"resources: []\n", "resources: Required value: at least one resources is required"},
		{"resources:\n- resources: [secrets]\n  providers: [{}]\n", `resources[0].providers[0]: Invalid value: {"AESGCM":null,"AESCBC":null,"Secretbox":null,"Identity":null,"KMS":null}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity`},
		{"resources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: a, secret: " + "MTIz" + "}]}\n", `resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 3, expected one of [16 24 32]`},
		{"resources:\n- resources: [secrets]\n  providers:\n  - secretbox: {keys: [{name: '', secret: '!!'}]}\n", `[resources[0].providers[0].secretbox.keys[0].name: Required value: name is a mandatory field for a key, resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded]`},
		{"resources:\n- resources: [Secrets, '*', 'secrets.*']\n  providers: [{identity: {}}]\n", `[resources[0].resources: Invalid value: ["Secrets","*","secrets.*"]: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked, resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters, resources[0].resources[1]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources, resources[0].resources[2]: Invalid value: "secrets.*": encrypting the same resource across groups is not supported]`},
		{"resources:\n- resources: [secrets, '*.']\n  providers: [{identity: {}}]\n", `resources[0].resources: Invalid value: ["secrets","*."]: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`},
		{"resources:\n- resources: ['*.*']\n  providers: [{identity: {}}]\n- resources: [secrets]\n  providers: [{identity: {}}]\n", `resource "secrets" is masked by earlier rule "*.*"`},
		{"resources:\n- resources: [secrets]\n  providers: [{kms: {name: x}}]\n", `resources[0].providers[0].kms: Invalid value: "": kms providers are not supported by this server`},
	} {
		_, err := LoadConfig(writeConfig(t, tc.body))
		if !strings.HasPrefix(tc.want, "resource ") {
			tc.want = "error while parsing file: " + tc.want
		} else {
			tc.want = "error while building transformers: " + tc.want
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.body, err, tc.want)
		}
	}
}
