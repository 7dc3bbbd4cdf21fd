package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/snapshot"
	"go.uber.org/zap"

	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
)

// newSnapshotCommand is `miniapiserver snapshot save|restore`: backups of
// the embedded etcd (or of any etcd, for save) through etcd's snapshot
// API, and restores done as etcdutl does them.
func newSnapshotCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save etcd's data to a file, or restore it into a new data dir",
	}
	var dataDir, pkiFrom string
	var servers []string
	var newKeys bool
	var tlsFlags etcdTLSFlags
	save := &cobra.Command{
		Use:   "save FILE",
		Short: "Save a snapshot of etcd's data to FILE",
		Long: `Save a snapshot of etcd's data to FILE, through etcd's snapshot API.

Without --etcd-servers it saves the embedded etcd of --data-dir: from the
running server, or, when none runs, by starting that etcd for the time of
the save.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return saveSnapshot(cmd.Context(), cmd.OutOrStdout(), args[0], dataDir, servers, tlsFlags)
		},
	}
	save.Flags().StringVar(&dataDir, "data-dir", NewOptions().DataDir, "The data dir of the server whose embedded etcd to save.")
	save.Flags().StringSliceVar(&servers, "etcd-servers", nil, "Save this etcd instead (the first URL's member) of the embedded one.")
	save.Flags().StringVar(&tlsFlags.caFile, "etcd-cafile", "", "With --etcd-servers: the CA (PEM) an https:// server is verified against.")
	save.Flags().StringVar(&tlsFlags.certFile, "etcd-certfile", "", "With --etcd-servers: the client certificate (PEM) presented.")
	save.Flags().StringVar(&tlsFlags.keyFile, "etcd-keyfile", "", "With --etcd-servers: the key (PEM) of --etcd-certfile.")
	restore := &cobra.Command{
		Use:   "restore FILE",
		Short: "Restore a snapshot into a new data dir",
		Long: `Restore the snapshot FILE as the embedded etcd of --data-dir, which must hold no
etcd data yet (nothing is ever written over). Then start miniapiserver with
that --data-dir.

The clients of the snapshot's data hold certificates and tokens signed by the
keys of the data dir the snapshot was taken of: its pki/ folder (client CA,
service account key, serving certificate, etcd CA) and admin-token. Name that
data dir with --pki-from and they are copied; or copy them yourself into
--data-dir before the restore; or pass --new-keys to start with new ones (every
client certificate, service account token and kubeconfig issued before then
answers 401). Without one of these the restore is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return restoreSnapshot(cmd.OutOrStdout(), args[0], dataDir, pkiFrom, newKeys)
		},
	}
	restore.Flags().StringVar(&dataDir, "data-dir", NewOptions().DataDir, "The data dir to restore into (created if missing).")
	restore.Flags().StringVar(&pkiFrom, "pki-from", "", "The data dir the snapshot was taken of (or its pki folder): its keys are copied into --data-dir.")
	restore.Flags().BoolVar(&newKeys, "new-keys", false, "Restore without the keys of the snapshot's data dir: the server makes new ones, and what was issued with the old ones stops working.")
	cmd.AddCommand(save, restore)
	return cmd
}

// etcdTLSFlags are --etcd-cafile, --etcd-certfile and --etcd-keyfile of
// snapshot save, for --etcd-servers.
type etcdTLSFlags struct{ caFile, certFile, keyFile string }

func saveSnapshot(ctx context.Context, out io.Writer, file, dataDir string, servers []string, tlsFlags etcdTLSFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	endpoint, tlsConfig, stop, err := snapshotSource(ctx, dataDir, servers, tlsFlags)
	if err != nil {
		return err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cfg := clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 10 * time.Second}
	if _, err := snapshot.SaveWithVersion(ctx, zap.NewNop(), cfg, file); err != nil {
		return fmt.Errorf("saving a snapshot of %s: %w", endpoint, err)
	}
	st, err := embedetcd.StatusOf(file)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "saved a snapshot of %s to %s: revision %d, %d keys, %d bytes\n", endpoint, file, st.Revision, st.Keys, st.SizeBytes)
	if len(servers) == 0 {
		fmt.Fprintf(out, "keep %s beside it: a restore needs its keys (snapshot restore --pki-from)\n", filepath.Join(dataDir, "pki")+" and "+filepath.Join(dataDir, "admin-token"))
	}
	return nil
}

// snapshotSource is the etcd to save and how to reach it: the first of
// servers, or the embedded etcd of dataDir (started for the time of the
// save, over TLS as its server starts it, when no server runs it).
func snapshotSource(ctx context.Context, dataDir string, servers []string, flags etcdTLSFlags) (string, *tls.Config, func(), error) {
	if len(servers) > 0 {
		tlsConfig, err := etcdTLSConfig(flags.caFile, flags.certFile, flags.keyFile)
		return servers[0], tlsConfig, func() {}, err
	}
	etcdDir := embeddedEtcdDir(dataDir)
	has, err := embedetcd.HasData(etcdDir)
	if err != nil {
		return "", nil, nil, err
	}
	if !has {
		return "", nil, nil, fmt.Errorf("--data-dir %s: no etcd data in %s", dataDir, etcdDir)
	}
	stop := func() {}
	url, files, running := embedetcd.RunningClient(etcdDir)
	if !running {
		o := NewOptions()
		o.DataDir = dataDir
		if files, err = embeddedEtcdTLS(o); err != nil {
			return "", nil, nil, err
		}
		etcd, err := embedetcd.Start(ctx, embedetcd.Config{Dir: etcdDir, ClientTLS: &files})
		if err != nil {
			return "", nil, nil, err
		}
		url, stop = etcd.ClientURL(), etcd.Stop
	}
	tlsConfig, err := clientTLS(files)
	if err != nil {
		stop()
		return "", nil, nil, err
	}
	return url, tlsConfig, stop, nil
}

func restoreSnapshot(out io.Writer, file, dataDir, pkiFrom string, newKeys bool) error {
	etcdDir := embeddedEtcdDir(dataDir)
	st, err := embedetcd.StatusOf(file)
	if err != nil {
		return err
	}
	keys, err := checkRestoreKeys(dataDir, pkiFrom, newKeys)
	if err != nil {
		return err
	}
	if err := embedetcd.Restore(file, etcdDir); err != nil {
		if !errors.Is(err, embedetcd.ErrHasData) {
			return err
		}
		msg := fmt.Sprintf("--data-dir %s holds etcd data already (%s); nothing was changed", dataDir, etcdDir)
		if _, _, running := embedetcd.RunningClient(etcdDir); running {
			msg += ": a server is running on it"
		}
		return errors.New(msg + ". Restore into a new --data-dir, and start miniapiserver with it")
	}
	if err := copyKeys(pkiFrom, dataDir, keys); err != nil {
		return err
	}
	fmt.Fprintf(out, "restored %s (revision %d, %d keys) into %s\n  miniapiserver --data-dir %s\n", file, st.Revision, st.Keys, etcdDir, dataDir)
	return nil
}
