package value

import (
	"crypto/aes"
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// EncryptionConfiguration is kube's apiserver.config.k8s.io/v1
// EncryptionConfiguration (--encryption-provider-config): for each list
// of resources, the providers that write (the first) and read (all) their
// values.
type EncryptionConfiguration struct {
	APIVersion string                  `json:"apiVersion"`
	Kind       string                  `json:"kind"`
	Resources  []ResourceConfiguration `json:"resources"`
}

// ResourceConfiguration names resources ("secrets", "deployments.apps",
// "*.apps", "*." for the core group, "*.*" for all) and their providers.
type ResourceConfiguration struct {
	Resources []string                `json:"resources"`
	Providers []ProviderConfiguration `json:"providers"`
}

// ProviderConfiguration is one provider: exactly one field is set.
type ProviderConfiguration struct {
	AESGCM    *KeysConfiguration `json:"aesgcm,omitempty"`
	AESCBC    *KeysConfiguration `json:"aescbc,omitempty"`
	Secretbox *KeysConfiguration `json:"secretbox,omitempty"`
	Identity  *struct{}          `json:"identity,omitempty"`
	// KMS is recognised to be refused: this server has no KMS plugins.
	KMS map[string]interface{} `json:"kms,omitempty"`
}

// KeysConfiguration are the keys of a provider; the first encrypts.
type KeysConfiguration struct {
	Keys []Key `json:"keys"`
}

// Key is a named key, base64-encoded.
type Key struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// The prefixes of kube's providers.
const (
	aesCBCPrefix    = "k8s:enc:aescbc:v1:"
	aesGCMPrefix    = "k8s:enc:aesgcm:v1:"
	secretboxPrefix = "k8s:enc:secretbox:v1:"
)

// Transformers are the transformers of each resource of a configuration.
type Transformers map[schema.GroupResource]Transformer

var anyResource = schema.GroupResource{Group: "*", Resource: "*"}

// For returns the transformer of resource: its own, its group's ("*.apps")
// or everyone's ("*.*"), else Identity.
func (t Transformers) For(resource schema.GroupResource) Transformer {
	if tr := t[resource]; tr != nil {
		return tr
	}
	if tr := t[schema.GroupResource{Group: resource.Group, Resource: "*"}]; tr != nil {
		return tr
	}
	if tr := t[anyResource]; tr != nil {
		return tr
	}
	return Identity
}

// LoadConfig reads an EncryptionConfiguration file (YAML or JSON) and
// builds its transformers, with kube's checks and messages.
func LoadConfig(path string) (Transformers, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("error reading encryption provider configuration file %q: %w", path, err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("encryption provider configuration file %q is empty", path)
	}
	var c EncryptionConfiguration
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("error decoding encryption provider configuration file %q: %w", path, err)
	}
	if c.APIVersion != "apiserver.config.k8s.io/v1" || c.Kind != "EncryptionConfiguration" {
		return nil, fmt.Errorf("error decoding encryption provider configuration file %q: want apiVersion apiserver.config.k8s.io/v1, kind EncryptionConfiguration; got %q, %q", path, c.APIVersion, c.Kind)
	}
	if errs := validate(&c); len(errs) > 0 {
		return nil, fmt.Errorf("error while parsing file: %w", errs.ToAggregate())
	}
	t, err := c.transformers()
	if err != nil {
		return nil, fmt.Errorf("error while building transformers: %w", err)
	}
	return t, nil
}

// transformers builds the configuration's transformers: a resource named
// in several lists reads with the providers of all of them.
func (c *EncryptionConfiguration) transformers() (Transformers, error) {
	byResource := map[schema.GroupResource][]PrefixTransformer{}
	for _, rc := range c.Resources {
		var providers []PrefixTransformer
		for _, p := range rc.Providers {
			pt, err := p.transformer()
			if err != nil {
				return nil, err
			}
			providers = append(providers, pt)
		}
		for _, r := range rc.Resources {
			gr := schema.ParseGroupResource(r)
			for _, masking := range []schema.GroupResource{{Group: gr.Group, Resource: "*"}, anyResource} {
				if _, masked := byResource[masking]; masked {
					return nil, fmt.Errorf("resource %q is masked by earlier rule %q", yamlName(gr), yamlName(masking))
				}
			}
			byResource[gr] = append(byResource[gr], providers...)
		}
	}
	out := Transformers{}
	for gr, list := range byResource {
		out[gr] = NewPrefixTransformers(fmt.Errorf("no matching prefix found"), list...)
	}
	return out, nil
}

func yamlName(gr schema.GroupResource) string {
	if gr.Group == "" && gr.Resource == "*" {
		return "*."
	}
	return gr.String()
}

func (p ProviderConfiguration) transformer() (PrefixTransformer, error) {
	switch {
	case p.AESGCM != nil:
		return keyedTransformer(p.AESGCM, aesGCMPrefix, "AES", func(key []byte) (Transformer, error) {
			block, err := aes.NewCipher(key)
			if err != nil {
				return nil, err
			}
			return NewGCM(block)
		})
	case p.AESCBC != nil:
		return keyedTransformer(p.AESCBC, aesCBCPrefix, "AES", func(key []byte) (Transformer, error) {
			block, err := aes.NewCipher(key)
			if err != nil {
				return nil, err
			}
			return NewCBC(block), nil
		})
	case p.Secretbox != nil:
		return keyedTransformer(p.Secretbox, secretboxPrefix, "Secretbox", func(key []byte) (Transformer, error) {
			var k [32]byte
			copy(k[:], key)
			return NewSecretbox(k), nil
		})
	case p.Identity != nil:
		return PrefixTransformer{Prefix: []byte{}, Transformer: Identity}, nil
	}
	return PrefixTransformer{}, fmt.Errorf("provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity")
}

// keyedTransformer is a provider with named keys: its values are
// "<prefix><key name>:<ciphertext>", written with the first key.
func keyedTransformer(c *KeysConfiguration, prefix, what string, build func(key []byte) (Transformer, error)) (PrefixTransformer, error) {
	var keys []PrefixTransformer
	for _, k := range c.Keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return PrefixTransformer{}, fmt.Errorf("could not obtain secret for named key %s: %w", k.Name, err)
		}
		t, err := build(secret)
		if err != nil {
			return PrefixTransformer{}, fmt.Errorf("error while creating transformer for named key %s: %w", k.Name, err)
		}
		keys = append(keys, PrefixTransformer{Prefix: []byte(k.Name + ":"), Transformer: t})
	}
	noKey := fmt.Errorf("no matching key was found for the provided %s transformer", what)
	return PrefixTransformer{Prefix: []byte(prefix), Transformer: NewPrefixTransformers(noKey, keys...)}, nil
}

// hasCapital reports whether s has an upper-case letter.
func hasCapital(s string) bool { return strings.ToLower(s) != s }
