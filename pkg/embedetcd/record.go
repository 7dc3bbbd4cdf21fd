package embedetcd

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/embed"
)

// record is what Dir/member.json remembers of the member whose data Dir
// holds, written at each start: the cluster it belongs to, so that a join
// can tell its data is another cluster's without starting it, and how a
// local client reaches it (see RunningClient).
type record struct {
	Name      string `json:"name"`
	MemberID  string `json:"memberID"`
	ClusterID string `json:"clusterID"`
	// ClientURL is the loopback client URL ("" in a record written before
	// it was kept: http); ClientTLS its TLS files, absolute paths.
	ClientURL string    `json:"clientURL,omitempty"`
	ClientTLS *TLSFiles `json:"clientTLS,omitempty"`
}

func recordFile(dir string) string { return filepath.Join(dir, "member.json") }

func writeRecord(dir string, e *embed.Etcd, clientURL string, files TLSFiles) error {
	rec := record{
		Name:      e.Config().Name,
		MemberID:  e.Server.MemberID().String(),
		ClusterID: e.Server.Cluster().ID().String(),
		ClientURL: clientURL,
	}
	if files != (TLSFiles{}) {
		abs, err := files.abs()
		if err != nil {
			return err
		}
		rec.ClientTLS = &abs
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(recordFile(dir), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("embedetcd: %w", err)
	}
	return nil
}

func readRecord(dir string) (record, error) {
	var r record
	data, err := os.ReadFile(recordFile(dir))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("embedetcd: %s: %w", recordFile(dir), err)
	}
	return r, nil
}

// checkName refuses to start the data of a member under another name: a
// server alone started on a member of a cluster's data, or the reverse,
// or a member renamed. etcd would start, and serve a cluster that is not
// the one meant.
func checkName(dir, name string) error {
	rec, err := readRecord(dir)
	if err != nil || rec.Name == name {
		return nil
	}
	if rec.Name == memberName {
		return fmt.Errorf("embedetcd: %s holds the etcd of a server alone, not of a member of an embedded etcd cluster: start it without the cluster flags (a new cluster member needs an empty data dir)", dir)
	}
	if name == memberName {
		return fmt.Errorf("embedetcd: %s holds member %q of an embedded etcd cluster: start it with the cluster flags it was started with (--embedded-etcd-name %s, --embedded-etcd-peer-url, ...)", dir, rec.Name, rec.Name)
	}
	return fmt.Errorf("embedetcd: %s holds member %q of an embedded etcd cluster, not %q: a member keeps its name", dir, rec.Name, name)
}

// randomHex is 8 random bytes in hex.
func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
