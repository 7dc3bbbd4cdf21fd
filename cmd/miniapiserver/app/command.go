package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// NewCommand returns the miniapiserver command: flags, validation, and
// Run until SIGTERM or SIGINT. main only executes it; tests use it to
// check the flags (and configurations that pass flags, such as
// deploy/docker-compose.yaml) against the real command.
func NewCommand() *cobra.Command {
	o := NewOptions()
	o.KubeAPIServer = IsKubeAPIServer(os.Args[0])
	cmd := &cobra.Command{
		Use:   "miniapiserver",
		Short: "A lightweight Kubernetes API server over etcd",
		Long: `miniapiserver serves the Kubernetes REST API (the groups its README lists, as kube 1.37),
stores objects in etcd and answers LIST and WATCH from its watch cache.

With no flags it runs an embedded etcd in --data-dir, serves HTTPS on 127.0.0.1:6443
with a generated certificate and admin token, and writes a kubeconfig for kubectl.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Kube.Version.print(cmd.OutOrStdout()) { // kube's --version: print and exit
				return nil
			}
			// kube-apiserver has no data dir: run as it (by envtest, say),
			// the files it generates go beside its certificates rather
			// than into the working directory.
			if cmd.Flags().Changed("cert-dir") && !cmd.Flags().Changed("data-dir") {
				o.DataDir = o.CertDir
			}
			o.DefaultsForEtcd(cmd.Flags())
			o.ApplyDeprecatedControllerFlags(cmd.Flags())
			if err := o.Validate(); err != nil {
				return err
			}
			setupLogging(o)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			// After the first signal, a second one stops the process at
			// once (the default action), during a graceful shutdown too.
			context.AfterFunc(ctx, stop)
			return Run(ctx, o, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(newSnapshotCommand(), newEtcdCommand(), newEnvtestAssetsCommand(), &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			v := Version()
			fmt.Fprintf(cmd.OutOrStdout(), "miniapiserver %s (Kubernetes API %s.%s, %s, %s)\n", v.GitVersion, v.Major, v.Minor, v.GoVersion, v.Platform)
		},
	})
	return cmd
}

func setupLogging(o *Options) {
	slog.SetDefault(slog.New(o.Logging.handler(os.Stderr, o.LogLevel)))
}
