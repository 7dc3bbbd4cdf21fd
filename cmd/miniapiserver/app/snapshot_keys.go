package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A snapshot holds etcd's data only. What the clients of that data hold
// was issued with keys kept beside it in the data dir: client
// certificates signed by pki/client-ca.key, service account tokens signed
// by pki/sa.key, kubeconfigs that trust pki/apiserver.crt, the admin
// token. A restore without them serves the data to nobody who had access
// (401 for every client), so it takes them from the data dir the
// snapshot was taken of, or is told to start with new ones.

// keyFiles lists the files of dataDir that hold its keys, relative to it:
// admin-token and what pki/ holds.
func keyFiles(dataDir string) ([]string, error) {
	var files []string
	if _, err := os.Stat(filepath.Join(dataDir, "admin-token")); err == nil {
		files = append(files, "admin-token")
	}
	entries, err := os.ReadDir(filepath.Join(dataDir, "pki"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, filepath.Join("pki", e.Name()))
		}
	}
	return files, nil
}

// checkRestoreKeys decides where the keys of a restore into dataDir come
// from: the data dir pkiFrom (or its pki folder) names, nothing when
// dataDir has keys already or newKeys accepts new ones. It returns the
// files to copy; it writes nothing.
func checkRestoreKeys(dataDir, pkiFrom string, newKeys bool) ([]string, error) {
	have, err := keyFiles(dataDir)
	if err != nil {
		return nil, err
	}
	switch {
	case pkiFrom != "" && newKeys:
		return nil, errors.New("--pki-from and --new-keys: choose one")
	case pkiFrom != "" && len(have) > 0:
		return nil, fmt.Errorf("--data-dir %s holds keys already (%s); nothing was changed", dataDir, strings.Join(have, ", "))
	case pkiFrom != "":
		if filepath.Base(filepath.Clean(pkiFrom)) == "pki" {
			pkiFrom = filepath.Dir(filepath.Clean(pkiFrom))
		}
		files, err := keyFiles(pkiFrom)
		if err != nil {
			return nil, fmt.Errorf("--pki-from: %w", err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("--pki-from %s: no keys there (admin-token, pki/)", pkiFrom)
		}
		return files, nil
	case len(have) > 0 || newKeys:
		return nil, nil
	}
	return nil, fmt.Errorf("--data-dir %s has no keys: the certificates and tokens issued for the snapshot's data were signed by "+
		"the keys of the data dir it was taken of (its pki/ and admin-token). Name that data dir with --pki-from, or pass "+
		"--new-keys to start with new keys (every client certificate, service account token and kubeconfig issued before "+
		"stops working); nothing was changed", dataDir)
}

// copyKeys copies files (relative paths) from the data dir from into
// dataDir, readable by the owner only.
func copyKeys(from, dataDir string, files []string) error {
	if filepath.Base(filepath.Clean(from)) == "pki" {
		from = filepath.Dir(filepath.Clean(from))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			return fmt.Errorf("--pki-from: %w", err)
		}
		dst := filepath.Join(dataDir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
