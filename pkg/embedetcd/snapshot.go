package embedetcd

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// ErrHasData is returned by Restore for a directory that holds an etcd
// already: a restore never writes over data.
var ErrHasData = errors.New("embedetcd: the directory holds etcd data already")

// HasData reports whether dir holds the data of an embedded etcd.
func HasData(dir string) (bool, error) {
	entries, err := os.ReadDir(memberDir(dir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("embedetcd: %w", err)
	}
	return len(entries) > 0, nil
}

// RunningClient returns the loopback client URL of the embedded etcd of
// dir, and the TLS files to connect with (zero: plain HTTP), when it is
// running (its remembered client port answers).
func RunningClient(dir string) (string, TLSFiles, bool) {
	client, _, err := readPorts(dir)
	if err != nil || client <= 0 {
		return "", TLSFiles{}, false
	}
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(client))
	conn, err := net.DialTimeout("tcp", host, time.Second)
	if err != nil {
		return "", TLSFiles{}, false
	}
	conn.Close()
	u := (&url.URL{Scheme: "http", Host: host}).String()
	rec, err := readRecord(dir)
	if err != nil || rec.ClientURL == "" {
		return u, TLSFiles{}, true
	}
	if rec.ClientTLS == nil {
		return rec.ClientURL, TLSFiles{}, true
	}
	return rec.ClientURL, *rec.ClientTLS, true
}

// Restore makes dir, which must hold no etcd data (ErrHasData), the data
// of a new single-member etcd holding what the snapshot file holds, as
// `etcdutl snapshot restore` does (the snapshot's integrity hash is
// checked). Start then runs it. On failure nothing is left in dir.
func Restore(snapshotFile, dir string) error {
	has, err := HasData(dir)
	if err != nil {
		return err
	}
	if has {
		return ErrHasData
	}
	client, err := freePort()
	if err != nil {
		return err
	}
	peer, err := freePort()
	if err != nil {
		return err
	}
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("embedetcd: %w", err)
	}
	peerURL := (&url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peer))}).String()
	err = snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        snapshotFile,
		Name:                memberName,
		OutputDataDir:       memberDir(dir),
		PeerURLs:            []string{peerURL},
		InitialCluster:      memberName + "=" + peerURL,
		InitialClusterToken: embed.NewConfig().InitialClusterToken, // as Start's
	})
	if err == nil {
		err = writePorts(dir, client, peer)
	}
	if err != nil {
		os.RemoveAll(memberDir(dir))
		if created {
			os.Remove(dir)
		}
		return fmt.Errorf("embedetcd: restoring %s: %w", snapshotFile, err)
	}
	return nil
}

// SnapshotStatus describes a snapshot file.
type SnapshotStatus struct {
	Revision  int64
	Keys      int
	SizeBytes int64
}

// StatusOf reads a snapshot file's revision, number of keys and size.
func StatusOf(snapshotFile string) (SnapshotStatus, error) {
	st, err := snapshot.NewV3(zap.NewNop()).Status(snapshotFile)
	if err != nil {
		return SnapshotStatus{}, fmt.Errorf("embedetcd: %s: %w", snapshotFile, err)
	}
	return SnapshotStatus{Revision: st.Revision, Keys: st.TotalKey, SizeBytes: st.TotalSize}, nil
}
