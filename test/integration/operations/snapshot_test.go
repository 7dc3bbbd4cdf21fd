// Package operations tests what an operator does to a running server:
// snapshots of its etcd and restores, running out of etcd's space quota
// and recovering, and graceful shutdown, through the command and the HTTP
// API as a user drives them.
package operations

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestSnapshotRoundTrip: objects written, a snapshot saved from the
// running server, restored into a new data dir; a server started there
// has the objects (and not those written after the snapshot), and its
// resourceVersions go on from the snapshot's. A server that is stopped
// can be saved too.
func TestSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := testserver.Start(t)
	ns := src.CreateNamespace(t)
	cms := kubernetes.NewForConfigOrDie(src.ClientConfig).CoreV1().ConfigMaps(ns)
	want := map[string]string{}
	var last *corev1.ConfigMap
	for i := range 20 {
		name := fmt.Sprintf("cm-%d", i)
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": strconv.Itoa(i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want[name], last = strconv.Itoa(i), cm
	}
	file := filepath.Join(t.TempDir(), "snapshot.db")
	if out := command(t, "snapshot", "save", file, "--data-dir", src.Options.DataDir); !strings.Contains(out, "saved a snapshot") {
		t.Fatalf("save said %q", out)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-the-snapshot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "restored")
	command(t, "snapshot", "restore", file, "--data-dir", dir, "--pki-from", src.Options.DataDir)
	restored := testserver.Start(t, func(o *app.Options) { o.DataDir = dir })
	// What was issued before the snapshot works on the restored server:
	// the admin token, a client certificate, and the serving CA.
	for name, cfg := range map[string]*rest.Config{"token": src.ClientConfig, "certificate": src.ClientConfigFor(t, "jane", "system:masters")} {
		cfg = rest.CopyConfig(cfg)
		cfg.Host = restored.URL
		if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Get(ctx, "cm-0", metav1.GetOptions{}); err != nil {
			t.Errorf("the %s issued before the snapshot, on the restored server: %v", name, err)
		}
	}
	rcms := kubernetes.NewForConfigOrDie(restored.ClientConfig).CoreV1().ConfigMaps(ns)
	list, err := rcms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			got[cm.Name] = cm.Data["i"]
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("restored configmaps:\n got %v\nwant %v", got, want)
	}
	next, err := rcms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "next"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rv(t, next.ResourceVersion) <= rv(t, last.ResourceVersion) {
		t.Errorf("the restored server's first write is at %s, before the snapshot's %s", next.ResourceVersion, last.ResourceVersion)
	}

	// A stopped server's etcd is started for the time of the save.
	src.Server.Stop()
	again := filepath.Join(t.TempDir(), "again.db")
	if out := command(t, "snapshot", "save", again, "--data-dir", src.Options.DataDir); !strings.Contains(out, "saved a snapshot") {
		t.Fatalf("save of a stopped server said %q", out)
	}
}

// TestSnapshotRestoreTouchesNothing: a restore into a data dir holding
// etcd data (a stopped server's, of this cluster or another, or a running
// server's) is refused with a clear message and changes no file; a file
// that is not a snapshot is refused before anything is written; a save
// from a data dir without etcd data creates nothing.
func TestSnapshotRestoreTouchesNothing(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t)
	file := filepath.Join(t.TempDir(), "snapshot.db")
	command(t, "snapshot", "save", file, "--data-dir", src.Options.DataDir)
	other := testserver.Start(t) // another cluster
	other.Server.Stop()

	t.Run("a running server's data dir", func(t *testing.T) {
		err := commandErr(t, "snapshot", "restore", file, "--data-dir", src.Options.DataDir)
		if err == nil || !strings.Contains(err.Error(), "holds etcd data already") || !strings.Contains(err.Error(), "running") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("another cluster's data dir", func(t *testing.T) {
		before := tree(t, other.Options.DataDir)
		err := commandErr(t, "snapshot", "restore", file, "--data-dir", other.Options.DataDir)
		if err == nil || !strings.Contains(err.Error(), "holds etcd data already") || !strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("got %v", err)
		}
		if after := tree(t, other.Options.DataDir); after != before {
			t.Errorf("the data dir changed:\nbefore %s\nafter  %s", before, after)
		}
	})
	t.Run("not a snapshot", func(t *testing.T) {
		bogus := filepath.Join(t.TempDir(), "bogus.db")
		if err := os.WriteFile(bogus, bytes.Repeat([]byte("not a snapshot "), 1000), 0o600); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "new")
		if err := commandErr(t, "snapshot", "restore", bogus, "--data-dir", dir); err == nil {
			t.Fatal("a file that is not a snapshot was restored")
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the data dir was created: %v", err)
		}
	})
	t.Run("save without etcd data", func(t *testing.T) {
		empty := t.TempDir()
		err := commandErr(t, "snapshot", "save", filepath.Join(t.TempDir(), "x.db"), "--data-dir", empty)
		if err == nil || !strings.Contains(err.Error(), "no etcd data") {
			t.Fatalf("got %v", err)
		}
		if got := tree(t, empty); got != "" {
			t.Errorf("files appeared: %s", got)
		}
	})
}

// TestSnapshotRestoreKeys: a restore into a data dir without keys is
// refused, naming --pki-from and --new-keys, and writes nothing; with
// --new-keys the server starts with keys of its own, and a token issued
// before answers 401.
func TestSnapshotRestoreKeys(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t)
	file := filepath.Join(t.TempDir(), "snapshot.db")
	command(t, "snapshot", "save", file, "--data-dir", src.Options.DataDir)
	dir := filepath.Join(t.TempDir(), "restored")
	err := commandErr(t, "snapshot", "restore", file, "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "--pki-from") || !strings.Contains(err.Error(), "--new-keys") {
		t.Fatalf("a restore without keys: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refused restore created the data dir: %v", err)
	}
	if err := commandErr(t, "snapshot", "restore", file, "--data-dir", dir, "--pki-from", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no keys there") {
		t.Fatalf("--pki-from a dir without keys: %v", err)
	}
	command(t, "snapshot", "restore", file, "--data-dir", dir, "--new-keys")
	restored := testserver.Start(t, func(o *app.Options) { o.DataDir = dir })
	cfg := rest.AnonymousClientConfig(restored.ClientConfig)
	cfg.BearerToken = src.Token
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("the old admin token on a server restored with new keys: %v, want 401", err)
	}
}

// command runs the miniapiserver command with args and returns its output.
func command(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(args)
	if err != nil {
		t.Fatalf("miniapiserver %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func commandErr(t *testing.T, args ...string) error {
	t.Helper()
	_, err := run(args)
	return err
}

func run(args []string) (string, error) {
	cmd := app.NewCommand()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

// tree describes every file under dir: path, mode and content hash.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))[:12]
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %v %s; ", rel, info.Mode(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func rv(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
