package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
)

// newEtcdCommand is `miniapiserver etcd member list|remove`: the members
// of the embedded etcd cluster, asked of the member of a running server.
func newEtcdCommand() *cobra.Command {
	var dataDir string
	member := &cobra.Command{
		Use:   "member",
		Short: "List or remove the members of the embedded etcd cluster",
	}
	member.PersistentFlags().StringVar(&dataDir, "data-dir", NewOptions().DataDir, "The data dir of a running server whose embedded etcd to ask.")
	member.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the members of the embedded etcd cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withMembers(cmd.Context(), dataDir, func(_ context.Context, _ *clientv3.Client, members []*etcdserverpb.Member) error {
				return printMembers(cmd.OutOrStdout(), members)
			})
		},
	}, &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a member (by name or hex ID) from the embedded etcd cluster",
		Long: `Remove a member, by name or hex ID, from the embedded etcd cluster, as
etcdctl member remove does: a member lost for good (its host or data gone)
stops counting towards the quorum, and a new server can join in its place.
A running member removed stops, and its server with it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withMembers(cmd.Context(), dataDir, func(ctx context.Context, cli *clientv3.Client, members []*etcdserverpb.Member) error {
				return removeMember(ctx, cmd.OutOrStdout(), cli, members, args[0])
			})
		},
	})
	etcd := &cobra.Command{Use: "etcd", Short: "Operate the embedded etcd cluster"}
	etcd.AddCommand(member)
	return etcd
}

// withMembers calls f with a client of the embedded etcd of dataDir (its
// server must be running) and the cluster's members.
func withMembers(ctx context.Context, dataDir string, f func(context.Context, *clientv3.Client, []*etcdserverpb.Member) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	url, files, running := embedetcd.RunningClient(embeddedEtcdDir(dataDir))
	if !running {
		return fmt.Errorf("--data-dir %s: no server is running with its embedded etcd", dataDir)
	}
	tlsConfig, err := clientTLS(files)
	if err != nil {
		return err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, TLS: tlsConfig, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := cli.MemberList(ctx)
	if err != nil {
		return fmt.Errorf("listing the members: %w", err)
	}
	return f(ctx, cli, resp.Members)
}

func printMembers(out io.Writer, members []*etcdserverpb.Member) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tID\tSTATUS\tPEER URLS\tCLIENT URLS")
	for _, m := range members {
		status := "voter"
		switch {
		case m.Name == "":
			status = "unstarted"
		case m.IsLearner:
			status = "learner"
		}
		fmt.Fprintf(w, "%s\t%x\t%s\t%s\t%s\n", m.Name, m.ID, status, strings.Join(m.PeerURLs, ","), strings.Join(m.ClientURLs, ","))
	}
	return w.Flush()
}

func removeMember(ctx context.Context, out io.Writer, cli *clientv3.Client, members []*etcdserverpb.Member, nameOrID string) error {
	for _, m := range members {
		id, err := strconv.ParseUint(nameOrID, 16, 64)
		if m.Name != nameOrID && (err != nil || id != m.ID) {
			continue
		}
		if _, err := cli.MemberRemove(ctx, m.ID); err != nil {
			return fmt.Errorf("removing member %s (%x): %w", m.Name, m.ID, err)
		}
		fmt.Fprintf(out, "removed member %s (%x) from the cluster\n", m.Name, m.ID)
		return nil
	}
	return fmt.Errorf("the cluster has no member named %q", nameOrID)
}

// clientTLS is the TLS configuration of a client of the embedded etcd
// that files were recorded for (nil for one in the clear).
func clientTLS(files embedetcd.TLSFiles) (*tls.Config, error) {
	if files == (embedetcd.TLSFiles{}) {
		return nil, nil
	}
	return files.ClientConfig()
}
