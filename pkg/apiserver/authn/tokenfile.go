// Package authn authenticates requests: static bearer tokens from a file in
// kube's --token-auth-file format.
package authn

import (
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
)

// TokenAuthenticator knows a set of bearer tokens and their users.
type TokenAuthenticator struct {
	tokens map[string]user.Info
}

// NewTokenAuthenticator returns an authenticator of the given tokens.
func NewTokenAuthenticator(tokens map[string]user.Info) *TokenAuthenticator {
	return &TokenAuthenticator{tokens: tokens}
}

// LoadTokenFile reads a token file: CSV lines "token,user,uid" with an
// optional fourth column of comma separated groups (quoted), as kube's
// --token-auth-file. Lines starting with # are comments.
func LoadTokenFile(path string) (*TokenAuthenticator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.Comment = '#'
	tokens := map[string]user.Info{}
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
	return &TokenAuthenticator{tokens: tokens}, nil
}

// AuthenticateToken returns the user of a token.
func (a *TokenAuthenticator) AuthenticateToken(token string) (user.Info, bool) {
	// Compare in constant time against every token, so that timing does
	// not tell how much of a guess was right.
	var found user.Info
	for t, u := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			found = u
		}
	}
	if found == nil {
		return nil, false
	}
	return found, true
}
