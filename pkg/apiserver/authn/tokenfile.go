package authn

import (
	"context"
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// TokenFile knows a set of static bearer tokens and their users (kube's
// --token-auth-file).
type TokenFile struct {
	tokens map[string]*user.DefaultInfo
}

var _ authenticator.Token = (*TokenFile)(nil)

// NewTokenFile returns an authenticator of the given tokens.
func NewTokenFile(tokens map[string]*user.DefaultInfo) *TokenFile {
	return &TokenFile{tokens: tokens}
}

// LoadTokenFile reads a token file: CSV lines "token,user,uid" with an
// optional fourth column of comma separated groups (quoted), as kube's
// --token-auth-file. Lines starting with # are comments.
func LoadTokenFile(path string) (*TokenFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.Comment = '#'
	tokens := map[string]*user.DefaultInfo{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("token file %s: %w", path, err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file %s, line %d: want at least token,user,uid", path, line)
		}
		token := strings.TrimSpace(rec[0])
		if token == "" {
			return nil, fmt.Errorf("token file %s, line %d: empty token", path, line)
		}
		if _, dup := tokens[token]; dup {
			return nil, fmt.Errorf("token file %s, line %d: duplicate token", path, line)
		}
		u := &user.DefaultInfo{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				u.Groups = append(u.Groups, strings.TrimSpace(g))
			}
		}
		tokens[token] = u
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("token file %s has no tokens", path)
	}
	return &TokenFile{tokens: tokens}, nil
}

// AuthenticateToken implements authenticator.Token: the user of a known
// token; an unknown token is not recognized (no error).
func (a *TokenFile) AuthenticateToken(_ context.Context, token string) (*authenticator.Response, bool, error) {
	// Compare in constant time against every token, so that timing does
	// not tell how much of a guess was right.
	var found *user.DefaultInfo
	for t, u := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			found = u
		}
	}
	if found == nil {
		return nil, false, nil
	}
	return &authenticator.Response{User: found}, true, nil
}
