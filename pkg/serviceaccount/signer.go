package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"

	jose "gopkg.in/go-jose/go-jose.v2"
	"gopkg.in/go-jose/go-jose.v2/jwt"
)

// Signer issues tokens of one issuer, signed with one key.
type Signer struct {
	issuer string
	signer jose.Signer
}

// NewSigner returns the signer of issuer with key (RS256 for RSA keys,
// ES256/384/512 for ECDSA ones by curve), naming the key by its key ID.
func NewSigner(issuer string, key crypto.Signer) (*Signer, error) {
	alg, err := algorithm(key.Public())
	if err != nil {
		return nil, err
	}
	id, err := KeyID(key.Public())
	if err != nil {
		return nil, err
	}
	s, err := jose.NewSigner(jose.SigningKey{
		Algorithm: alg,
		Key:       &jose.JSONWebKey{Algorithm: string(alg), Key: key, KeyID: id, Use: "sig"},
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to create signer: %v", err)
	}
	return &Signer{issuer: issuer, signer: s}, nil
}

// Issuer is the issuer the tokens name.
func (s *Signer) Issuer() string { return s.issuer }

// Sign returns the compact JWT of the claims, with the signer's issuer.
func (s *Signer) Sign(public *jwt.Claims, private any) (string, error) {
	return jwt.Signed(s.signer).Claims(private).Claims(public).Claims(&jwt.Claims{Issuer: s.issuer}).CompactSerialize()
}

// algorithm is the signature algorithm kube uses with a key.
func algorithm(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("unknown private key curve, must be 256, 384, or 521")
	}
	return "", fmt.Errorf("unknown private key type %T, must be *rsa.PrivateKey or *ecdsa.PrivateKey", pub)
}
