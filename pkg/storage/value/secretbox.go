package value

import (
	"context"
	"crypto/rand"
	"fmt"

	"golang.org/x/crypto/nacl/secretbox"
)

const secretboxNonceSize = 24

// NewSecretbox returns the XSalsa20-Poly1305 transformer of key (kube's
// secretbox): a random 24-byte nonce, then the box.
func NewSecretbox(key [32]byte) Transformer { return &secretboxTransformer{key: key} }

type secretboxTransformer struct{ key [32]byte }

func (t *secretboxTransformer) TransformFromStorage(_ context.Context, data []byte, _ string) ([]byte, bool, error) {
	if len(data) < secretbox.Overhead+secretboxNonceSize {
		return nil, false, errShort
	}
	var nonce [secretboxNonceSize]byte
	copy(nonce[:], data)
	out, ok := secretbox.Open(nil, data[secretboxNonceSize:], &nonce, &t.key)
	if !ok {
		return nil, false, fmt.Errorf("output array was not large enough for encryption")
	}
	return out, false, nil
}

func (t *secretboxTransformer) TransformToStorage(_ context.Context, data []byte, _ string) ([]byte, error) {
	var nonce [secretboxNonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, errRandomExhausted
	}
	return secretbox.Seal(nonce[:], data, &nonce, &t.key), nil
}
