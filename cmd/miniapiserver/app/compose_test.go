package app_test

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
)

// compose is the part of a docker-compose file the test reads.
type compose struct {
	Services map[string]struct {
		Image   string   `json:"image"`
		Command []string `json:"command"`
		Ports   []string `json:"ports"`
		Build   *struct {
			Context    string `json:"context"`
			Dockerfile string `json:"dockerfile"`
		} `json:"build"`
		DependsOn []string `json:"depends_on"`
	} `json:"services"`
}

// flagValue returns the value of --name in args ("--name=v" or "--name v").
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// TestDockerCompose checks deploy/docker-compose.yaml against the real
// command (no Docker engine needed): every flag given to miniapiserver
// exists and parses and validates, the published port is the one it
// serves and the Dockerfile exposes, and --etcd-servers names the etcd
// service on the port etcd listens on.
func TestDockerCompose(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/docker-compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	srv, ok := c.Services["miniapiserver"]
	if !ok || srv.Build == nil {
		t.Fatalf("no miniapiserver service built from the repository: %+v", c.Services)
	}
	etcd, ok := c.Services["etcd"]
	if !ok || !slices.Contains(srv.DependsOn, "etcd") {
		t.Fatalf("miniapiserver must depend on an etcd service")
	}

	// Every flag exists, parses and validates, as the binary would.
	cmd := app.NewCommand()
	if err := cmd.ParseFlags(srv.Command); err != nil {
		t.Fatalf("the compose file's flags do not parse: %v", err)
	}
	for _, a := range srv.Command {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if strings.HasPrefix(a, "--") && cmd.Flags().Lookup(name) == nil {
			t.Errorf("flag --%s does not exist", name)
		}
	}
	o := app.NewOptions()
	fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(srv.Command); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("the compose file's flags do not validate: %v", err)
	}

	port := checkSecurePortPublished(t, srv.Command, srv.Ports, srv.Build.Dockerfile)

	// --etcd-servers names the etcd service on a port it listens on.
	servers, ok := flagValue(srv.Command, "etcd-servers")
	if !ok {
		t.Fatal("miniapiserver is not pointed at etcd (--etcd-servers)")
	}
	listen, _ := flagValue(etcd.Command, "listen-client-urls")
	for _, s := range strings.Split(servers, ",") {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() != "etcd" {
			t.Errorf("--etcd-servers %q does not name the etcd service", s)
			continue
		}
		if !strings.Contains(listen, ":"+u.Port()) {
			t.Errorf("--etcd-servers port %s: etcd listens on %q", u.Port(), listen)
		}
	}
	if _, err := strconv.Atoi(port); err != nil {
		t.Errorf("--secure-port %q", port)
	}
}

// checkSecurePortPublished checks that the secure port of command is
// published (ports) and exposed by the Dockerfile, and returns it.
func checkSecurePortPublished(t *testing.T, command, ports []string, dockerfile string) string {
	t.Helper()
	port := "6443"
	if v, ok := flagValue(command, "secure-port"); ok {
		port = v
	}
	published := false
	for _, p := range ports {
		parts := strings.Split(p, ":")
		if parts[len(parts)-1] == port {
			published = true
		}
	}
	if !published {
		t.Errorf("the secure port %s is not published: %v", port, ports)
	}
	data, err := os.ReadFile("../../../" + dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^EXPOSE\s+` + port + `\b`).Match(data) {
		t.Errorf("the Dockerfile does not EXPOSE %s", port)
	}
	return port
}

// TestDefragDefaultFollowsEtcd: the server defragments the embedded etcd
// by default, an external one only when told to.
func TestDefragDefaultFollowsEtcd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "1m0s"},
		{[]string{"--etcd-servers=http://127.0.0.1:2379"}, "0s"},
		{[]string{"--etcd-servers=http://127.0.0.1:2379", "--etcd-defrag-interval=2m"}, "2m0s"},
		{[]string{"--etcd-defrag-interval=0"}, "0s"},
	} {
		o := app.NewOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o.DefaultsForEtcd(fs)
		if got := o.EtcdDefragInterval.String(); got != tc.want {
			t.Errorf("%v: --etcd-defrag-interval %s, want %s", tc.args, got, tc.want)
		}
	}
}
