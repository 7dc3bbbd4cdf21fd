package serviceaccount

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	jose "gopkg.in/go-jose/go-jose.v2"
)

// The paths of the issuer's OpenID discovery documents.
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
)

// Discovery holds the OpenID discovery documents of the issuer, as kube
// serves them so that other systems can verify its tokens: the
// configuration (issuer, jwks_uri, algorithms) and the key set.
type Discovery struct {
	Config []byte
	JWKS   []byte
}

// NewDiscovery builds the documents of issuer and keys. jwksURI, when
// empty, is https://externalAddress/openid/v1/jwks. kube's rules apply: the
// issuer must be an https URL without query or fragment.
func NewDiscovery(issuer, jwksURI, externalAddress string, keys []PublicKey) (*Discovery, error) {
	iss, err := url.Parse(issuer)
	switch {
	case err != nil:
		return nil, err
	case iss.Scheme != "https":
		return nil, fmt.Errorf("issuer URL must use https scheme, got: %s", issuer)
	case iss.RawQuery != "":
		return nil, fmt.Errorf("issuer URL may not include a query, got: %s", issuer)
	case iss.Fragment != "":
		return nil, fmt.Errorf("issuer URL may not include a fragment, got: %s", issuer)
	}
	if jwksURI == "" {
		jwksURI = (&url.URL{Scheme: "https", Host: externalAddress, Path: JWKSPath}).String()
	} else if u, err := url.Parse(jwksURI); err != nil {
		return nil, err
	} else if u.Scheme != "https" {
		return nil, fmt.Errorf("jwksURI requires https scheme, parsed as: %v", u.String())
	}
	var set jose.JSONWebKeySet
	var algs []string
	for i, k := range keys {
		alg, err := algorithm(k.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("error constructing JWK for key #%d: %v", i, err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Algorithm: string(alg), Key: k.PublicKey, KeyID: k.KeyID, Use: "sig"})
		if !slices.Contains(algs, string(alg)) {
			algs = append(algs, string(alg))
		}
	}
	slices.Sort(algs)
	config, err := json.Marshal(struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
	}{issuer, jwksURI, []string{"id_token"}, []string{"public"}, algs})
	if err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	return &Discovery{Config: config, JWKS: jwks}, nil
}
