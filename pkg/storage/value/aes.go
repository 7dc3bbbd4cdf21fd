package value

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
)

// NewCBC returns the AES-CBC transformer of block (kube's aescbc): a
// random IV, then the PKCS#7-padded plaintext encrypted.
func NewCBC(block cipher.Block) Transformer { return &cbc{block: block} }

type cbc struct{ block cipher.Block }

var (
	errShort           = errors.New("the stored data was shorter than the required size")
	errInvalidBlock    = errors.New("the stored data is not a multiple of the block size")
	errInvalidPKCS7    = errors.New("invalid PKCS7 data (empty or not padded)")
	errInvalidPadding  = errors.New("invalid padding on input")
	errRandomExhausted = errors.New("unable to read sufficient random bytes")
)

func (t *cbc) TransformFromStorage(_ context.Context, data []byte, _ string) ([]byte, bool, error) {
	const bs = aes.BlockSize
	if len(data) < bs {
		return nil, false, errShort
	}
	iv, data := data[:bs], data[bs:]
	if len(data)%bs != 0 {
		return nil, false, errInvalidBlock
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(t.block, iv).CryptBlocks(out, data)
	if len(out) == 0 {
		return nil, false, errInvalidPKCS7
	}
	pad := int(out[len(out)-1])
	if pad == 0 || pad > len(out) {
		return nil, false, errInvalidPKCS7
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, false, errInvalidPadding
		}
	}
	return out[:len(out)-pad], false, nil
}

func (t *cbc) TransformToStorage(_ context.Context, data []byte, _ string) ([]byte, error) {
	const bs = aes.BlockSize
	pad := bs - len(data)%bs
	out := make([]byte, bs+len(data)+pad)
	if _, err := io.ReadFull(rand.Reader, out[:bs]); err != nil {
		return nil, errRandomExhausted
	}
	copy(out[bs:], data)
	copy(out[bs+len(data):], bytes.Repeat([]byte{byte(pad)}, pad))
	cipher.NewCBCEncrypter(t.block, out[:bs]).CryptBlocks(out[bs:], out[bs:])
	return out, nil
}

// NewGCM returns the AES-GCM transformer of block (kube's aesgcm): a
// random 12-byte nonce, then the sealed plaintext, authenticated with the
// etcd key.
func NewGCM(block cipher.Block) (Transformer, error) {
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if n := aead.NonceSize(); n != 12 {
		return nil, fmt.Errorf("crypto/cipher.NewGCM returned unexpected nonce size: %d", n)
	}
	return &gcm{aead: aead}, nil
}

type gcm struct{ aead cipher.AEAD }

func (t *gcm) TransformFromStorage(_ context.Context, data []byte, key string) ([]byte, bool, error) {
	n := t.aead.NonceSize()
	if len(data) < n {
		return nil, false, errShort
	}
	out, err := t.aead.Open(nil, data[:n], data[n:], []byte(key))
	return out, false, err
}

func (t *gcm) TransformToStorage(_ context.Context, data []byte, key string) ([]byte, error) {
	n := t.aead.NonceSize()
	out := make([]byte, n, n+len(data)+t.aead.Overhead())
	if _, err := io.ReadFull(rand.Reader, out); err != nil {
		return nil, fmt.Errorf("failed to write nonce for AES-GCM: %w", err)
	}
	return t.aead.Seal(out, out, data, []byte(key)), nil
}
