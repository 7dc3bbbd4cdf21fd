// Package value transforms the values stored in etcd, as kube's
// storage/value: encryption at rest. A Transformer sits between the etcd3
// store and etcd; everything above it (the watch cache included) sees
// plaintext, so a watched change is decrypted once, whatever the number
// of watchers.
//
// The stored form is kube-apiserver's, byte for byte: a provider prefix
// ("k8s:enc:aescbc:v1:"), the key's name and a colon, then the
// provider's ciphertext. Values written by one server decrypt on the
// other with the same EncryptionConfiguration; the plaintext is in the
// stored media type (storage.Codec: kube's protobuf by default).
//
// Layers: a leaf of pkg/storage, used by storage/etcd3; cmd builds the
// transformers from --encryption-provider-config.
package value

import (
	"bytes"
	"context"
	"errors"
)

// Transformer changes a value on its way to and from etcd. key is the
// value's etcd key: authenticated (not encrypted) data for the providers
// that use it (AES-GCM), so that a value moved to another key does not
// decrypt.
type Transformer interface {
	// TransformFromStorage returns the plaintext of a stored value; stale
	// reports that it was not written by the transformer that writes now
	// (an older key or provider), so that an update rewrites it.
	TransformFromStorage(ctx context.Context, data []byte, key string) (out []byte, stale bool, err error)
	// TransformToStorage returns the value to store for plaintext data.
	TransformToStorage(ctx context.Context, data []byte, key string) ([]byte, error)
}

// PrefixTransformer is a transformer whose values start with Prefix.
type PrefixTransformer struct {
	Prefix      []byte
	Transformer Transformer
}

// prefixTransformers writes with the first and reads with the first whose
// prefix the value has (and that can read it).
type prefixTransformers struct {
	transformers []PrefixTransformer
	noMatch      error
}

// NewPrefixTransformers returns a transformer that writes with the first
// of transformers, prefixing the value with its prefix, and reads a value
// with the first transformer whose prefix it has and that decrypts it;
// noMatch is the error when none does. Two transformers may share a
// prefix (a provider listed twice during key rotation): a failure to
// decrypt moves on to the next.
func NewPrefixTransformers(noMatch error, transformers ...PrefixTransformer) Transformer {
	return &prefixTransformers{transformers: transformers, noMatch: noMatch}
}

func (t *prefixTransformers) TransformFromStorage(ctx context.Context, data []byte, key string) ([]byte, bool, error) {
	var errs []error
	for i, pt := range t.transformers {
		if !bytes.HasPrefix(data, pt.Prefix) {
			continue
		}
		out, stale, err := pt.Transformer.TransformFromStorage(ctx, data[len(pt.Prefix):], key)
		if err != nil {
			// identity (no prefix) refuses encrypted data, which a later
			// provider reads; an encryption provider may be listed twice.
			if len(pt.Prefix) != 0 {
				errs = append(errs, err)
			}
			continue
		}
		return out, stale || i != 0, nil
	}
	if len(errs) == 1 {
		return nil, false, errs[0]
	}
	if len(errs) > 1 {
		return nil, false, errors.Join(errs...)
	}
	return nil, false, t.noMatch
}

func (t *prefixTransformers) TransformToStorage(ctx context.Context, data []byte, key string) ([]byte, error) {
	first := t.transformers[0]
	out, err := first.Transformer.TransformToStorage(ctx, data, key)
	if err != nil {
		return nil, err
	}
	prefixed := make([]byte, 0, len(first.Prefix)+len(out))
	prefixed = append(prefixed, first.Prefix...)
	return append(prefixed, out...), nil
}

// encryptedPrefix starts every value an encryption provider wrote.
var encryptedPrefix = []byte("k8s:enc:")

var errEncryptedData = errors.New("identity transformer tried to read encrypted data")

// Identity stores values as they are. It refuses to read a value an
// encryption provider wrote (the prefix "k8s:enc:"), as kube's, so that a
// configuration listing identity first still reads encrypted values with
// the providers after it.
var Identity Transformer = identity{}

type identity struct{}

func (identity) TransformFromStorage(_ context.Context, data []byte, _ string) ([]byte, bool, error) {
	if bytes.HasPrefix(data, encryptedPrefix) {
		return nil, false, errEncryptedData
	}
	return data, false, nil
}

func (identity) TransformToStorage(_ context.Context, data []byte, _ string) ([]byte, error) {
	return data, nil
}
