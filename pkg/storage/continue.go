package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// continueToken is the content of a list's continue token, in kube's format
// (base64 of {"v":"meta.k8s.io/v1","rv":REV,"start":KEY}) so that tokens look
// the same to clients. The key is relative to the list's prefix.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueTokenVersion = "meta.k8s.io/v1"

// EncodeContinue returns the token that resumes a list under keyPrefix at
// revision rev from key (inclusive).
func EncodeContinue(key, keyPrefix string, rev int64) (string, error) {
	rel := strings.TrimPrefix(key, keyPrefix)
	if rel == key {
		return "", fmt.Errorf("storage: continue key %q is not under %q", key, keyPrefix)
	}
	data, err := json.Marshal(continueToken{APIVersion: continueTokenVersion, ResourceVersion: rev, StartKey: rel})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// DecodeContinue returns the key to resume from and the revision of a
// continue token (negative: the latest); a malformed token is an InvalidObj
// error.
func DecodeContinue(token, keyPrefix string) (fromKey string, rev int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, NewInvalidError(fmt.Sprintf("continue key is not valid: %v", err))
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, NewInvalidError(fmt.Sprintf("continue key is not valid: %v", err))
	}
	if c.APIVersion != continueTokenVersion {
		return "", 0, NewInvalidError(fmt.Sprintf("continue key is not valid: server does not recognize this encoding (%s)", c.APIVersion))
	}
	// A negative revision means "the latest" (see ExpiredContinueError);
	// zero is never issued.
	if c.ResourceVersion == 0 {
		return "", 0, NewInvalidError("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	if len(c.StartKey) == 0 {
		return "", 0, NewInvalidError("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	}
	// The start key must stay under the prefix: a token must not read
	// beyond the range it was issued for.
	cleaned := path.Clean(c.StartKey)
	if cleaned != c.StartKey || strings.HasPrefix(cleaned, "../") || cleaned == ".." || strings.HasPrefix(cleaned, "/") {
		return "", 0, NewInvalidError(fmt.Sprintf("continue key is not valid: %s", c.StartKey))
	}
	return keyPrefix + cleaned, c.ResourceVersion, nil
}
