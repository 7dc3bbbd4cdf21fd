// Package serviceaccount holds what both ends of a service account token
// share: the signing and verification keys (--service-account-*-key-file,
// or a key generated for the one-command run), the claims kube puts in
// bound and legacy tokens, the signer the TokenRequest API uses, and the
// OpenID discovery documents of the issuer. Tokens are kube's JWTs to the
// letter (key IDs, claims, algorithms), so that a token signed by this
// server verifies on kube-apiserver with the same key, and back.
//
// Layers: a leaf, imported by the registry (TokenRequest) and the
// apiserver (the token authenticator); it imports nothing of this
// project.
package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// PublicKey is a verification key and its key ID.
type PublicKey struct {
	KeyID     string
	PublicKey crypto.PublicKey
}

// KeyID is kube's key ID of a public key: the unpadded base64url SHA-256
// of its PKIX DER form.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("failed to serialize public key to DER format: %v", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// ReadPublicKeys reads the RSA and ECDSA public keys of a PEM file, as
// kube's --service-account-key-file: public keys, certificates, or private
// keys (whose public halves are used).
func ReadPublicKeys(path string) ([]PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := ParsePublicKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// ParsePublicKeys is ReadPublicKeys on PEM data.
func ParsePublicKeys(data []byte) ([]PublicKey, error) {
	var keys []PublicKey
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		pub, err := publicKeyOf(block)
		if err != nil {
			return nil, err
		}
		if pub == nil {
			continue // another kind of block
		}
		id, err := KeyID(pub)
		if err != nil {
			return nil, err
		}
		keys = append(keys, PublicKey{KeyID: id, PublicKey: pub})
	}
	if len(keys) == 0 {
		return nil, errors.New("data does not contain any valid RSA or ECDSA public keys")
	}
	return keys, nil
}

// publicKeyOf reads the public key a PEM block holds; nil for a block of
// another kind.
func publicKeyOf(block *pem.Block) (crypto.PublicKey, error) {
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = cert.PublicKey
		}
	case "RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY":
		var signer crypto.Signer
		if signer, err = parsePrivateKey(block); err == nil {
			key = signer.Public()
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("parsing a %s block: %w", block.Type, err)
	}
	switch key.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return key, nil
	}
	return nil, fmt.Errorf("a %s block holds a %T, not an RSA or ECDSA key", block.Type, key)
}

// ReadPrivateKey reads the first RSA or ECDSA private key of a PEM file
// (kube's --service-account-signing-key-file).
func ReadPrivateKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%s: no RSA or ECDSA private key found", path)
		}
		switch block.Type {
		case "RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY":
			key, err := parsePrivateKey(block)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return key, nil
		}
	}
}

func parsePrivateKey(block *pem.Block) (crypto.Signer, error) {
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, err
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T, must be RSA or ECDSA", key)
}

// GenerateKey makes a new ECDSA P-256 signing key (ES256 tokens), in PEM.
func GenerateKey() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
