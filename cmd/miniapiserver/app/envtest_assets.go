package app

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// kubeAPIServerName is the name under which envtest looks for the API
// server binary (the binary needs no special name to act as one).
const kubeAPIServerName = "kube-apiserver"

// tarballDir is where setup-envtest's release tarballs keep their
// binaries (it keeps only the base names).
const tarballDir = "controller-tools/envtest"

func newEnvtestAssetsCommand() *cobra.Command {
	var tarball, kubectl string
	cmd := &cobra.Command{
		Use:   "envtest-assets [DIR]",
		Short: "Write controller-runtime envtest's binaries (kube-apiserver, etcd): a directory for KUBEBUILDER_ASSETS, or a tarball for setup-envtest sideload",
		Long: `envtest-assets writes this binary as envtest's kube-apiserver and as its etcd (the binary
acts as etcd when run under that name) into DIR, for KUBEBUILDER_ASSETS:

  miniapiserver envtest-assets ./bin/k8s && KUBEBUILDER_ASSETS=$PWD/bin/k8s go test ./...

and with --tarball, as a release tarball of setup-envtest's layout:

  miniapiserver envtest-assets --tarball envtest.tar.gz
  setup-envtest sideload 1.37.2 < envtest.tar.gz

envtest uses kubectl only when a test asks for it: --kubectl adds one.`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && tarball == "" {
				return errors.New("give a directory, --tarball, or both")
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			files := map[string]string{kubeAPIServerName: self, EtcdName: self}
			if kubectl != "" {
				files["kubectl"] = kubectl
			}
			if len(args) == 1 {
				if err := writeAssetDir(args[0], files); err != nil {
					return err
				}
				abs, _ := filepath.Abs(args[0])
				fmt.Fprintf(cmd.OutOrStdout(), "export KUBEBUILDER_ASSETS=%s\n", abs)
			}
			if tarball != "" {
				return writeAssetTarball(tarball, files)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&tarball, "tarball", "", "Also write a .tar.gz of the binaries, in setup-envtest's layout ("+tarballDir+"/...), to this file.")
	cmd.Flags().StringVar(&kubectl, "kubectl", "", "Path of a kubectl to add beside the server's binaries.")
	return cmd
}

// writeAssetDir writes each named file into dir: a hard link to its
// source where the file system allows, a copy otherwise (a symlink would
// break when the source moves).
func writeAssetDir(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, src := range files {
		dst := filepath.Join(dir, name)
		if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if os.Link(src, dst) == nil {
			continue
		}
		if err := copyExecutable(src, dst); err != nil {
			return fmt.Errorf("writing %s: %w", dst, err)
		}
	}
	return nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeAssetTarball writes the files as regular files (setup-envtest
// skips links) under tarballDir in a gzipped tar.
func writeAssetTarball(path string, files map[string]string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, name := range []string{kubeAPIServerName, EtcdName, "kubectl"} {
		src, ok := files[name]
		if !ok {
			continue
		}
		if err := addTarFile(tw, tarballDir+"/"+name, src); err != nil {
			return fmt.Errorf("--tarball: %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func addTarFile(tw *tar.Writer, name, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: info.Size(), ModTime: info.ModTime()}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, in)
	return err
}
