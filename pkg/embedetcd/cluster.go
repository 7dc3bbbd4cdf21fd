package embedetcd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/membership"
	"go.uber.org/zap"
)

// Cluster makes an embedded etcd one member of a cluster of embedded
// etcds, as k3s runs them: the first member initializes the cluster, each
// other one joins it through the peer URL of a member already in it. The
// members speak TLS to each other with certificates of one CA; besides
// the loopback client URL its own server uses, each serves TLS clients of
// that CA (the members joining, which ask it to add them) at ClientURL.
type Cluster struct {
	// Name of the member, unique in the cluster.
	Name string
	// PeerURL (https://host:2380) is where the other members reach this
	// one; it listens there (on every interface when host is a name).
	PeerURL string
	// ClientURL (https://host:2379) is where members joining reach this
	// one's client API; it listens there as PeerURL does.
	ClientURL string
	// Init starts a new cluster of this one member; Join is the peer URL
	// of a member of the cluster to join. Either is needed the first time
	// only: a member whose Dir holds data restarts from it (a Join given
	// then must lead to the same cluster).
	Init bool
	Join string
	// TLS are the member's certificate, its key and the CA of the cluster
	// (PEM files); the certificate must be valid for serving PeerURL's and
	// ClientURL's hosts and as a client.
	TLS TLSFiles
}

// TLSFiles are PEM files of a certificate, its key and the CA that signed
// it and every other member's (and client's).
type TLSFiles struct{ CertFile, KeyFile, CAFile string }

func (f TLSFiles) info() transport.TLSInfo {
	return transport.TLSInfo{CertFile: f.CertFile, KeyFile: f.KeyFile, TrustedCAFile: f.CAFile, ClientCertAuth: true}
}

// ClientConfig is the TLS configuration of a client presenting CertFile
// and verifying the server against CAFile.
func (f TLSFiles) ClientConfig() (*tls.Config, error) {
	cfg, err := f.info().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("embedetcd: %w", err)
	}
	return cfg, nil
}

// abs makes the paths absolute: a record of them is read by commands
// run elsewhere.
func (f TLSFiles) abs() (TLSFiles, error) {
	var err error
	for _, p := range []*string{&f.CertFile, &f.KeyFile, &f.CAFile} {
		if *p, err = filepath.Abs(*p); err != nil {
			return TLSFiles{}, fmt.Errorf("embedetcd: %w", err)
		}
	}
	return f, nil
}

// ErrOtherCluster is returned by Start when Dir holds a member of another
// cluster than the one Join leads to: nothing is started or changed.
var ErrOtherCluster = errors.New("embedetcd: the data dir holds a member of another cluster")

// configure makes ec this member's configuration: a new cluster, a
// restart from the data in dir, or a join (this member is added to the
// cluster as a learner first).
func (c *Cluster) configure(ctx context.Context, ec *embed.Config, dir string) error {
	peer, err := url.Parse(c.PeerURL)
	if err != nil {
		return fmt.Errorf("embedetcd: peer URL: %w", err)
	}
	client, err := url.Parse(c.ClientURL)
	if err != nil {
		return fmt.Errorf("embedetcd: client URL: %w", err)
	}
	ec.Name = c.Name
	ec.PeerTLSInfo, ec.ClientTLSInfo = c.TLS.info(), c.TLS.info()
	ec.AdvertisePeerUrls, ec.ListenPeerUrls = []url.URL{*peer}, []url.URL{listenURL(*peer)}
	// The loopback client URL is listened on but not advertised: members
	// joining use ClientURL.
	ec.AdvertiseClientUrls = []url.URL{*client}
	ec.ListenClientUrls = append(ec.ListenClientUrls, listenURL(*client))
	// Real networks: etcd's default 100 ms ticks and 1 s elections.
	def := embed.NewConfig()
	ec.TickMs, ec.ElectionMs = def.TickMs, def.ElectionMs
	ec.InitialCluster = c.Name + "=" + c.PeerURL

	has, err := HasData(dir)
	if err != nil {
		return err
	}
	switch {
	case has:
		return c.checkSameCluster(ctx, dir)
	case c.Init:
		// A token of its own gives the cluster an ID no other cluster
		// has, even one initialized with the same name and URL.
		ec.InitialClusterToken = "miniapiserver-" + randomHex()
		ec.ClusterState = embed.ClusterStateFlagNew
		return nil
	case c.Join != "":
		initial, err := c.addLearner(ctx)
		if err != nil {
			return err
		}
		ec.InitialCluster, ec.ClusterState = initial, embed.ClusterStateFlagExisting
		return nil
	}
	return fmt.Errorf("embedetcd: %s holds no etcd data: initialize a cluster or join one", dir)
}

// listenURL is where to listen for u: its host when that is an IP
// address (etcd binds addresses only), every interface otherwise.
func listenURL(u url.URL) url.URL {
	host, port, _ := net.SplitHostPort(u.Host)
	if net.ParseIP(host) == nil && host != "localhost" {
		u.Host = net.JoinHostPort("0.0.0.0", port)
	}
	return u
}

// checkSameCluster refuses to restart a member whose data belongs to
// another cluster than the one Join leads to. A Join unreachable is no
// reason not to restart: the member it names may be the one down.
func (c *Cluster) checkSameCluster(ctx context.Context, dir string) error {
	if c.Join == "" {
		return nil
	}
	rec, recErr := readRecord(dir)
	_, clusterID, err := c.peerMembers(ctx)
	if err != nil {
		return nil
	}
	if recErr != nil {
		return fmt.Errorf("%w: %s holds etcd data of an unknown cluster, and %s is a member of cluster %s; nothing was changed. Join with an empty data dir",
			ErrOtherCluster, dir, c.Join, clusterID)
	}
	if rec.ClusterID != clusterID {
		return fmt.Errorf("%w: %s holds member %s of cluster %s, and %s is a member of cluster %s; nothing was changed. Join with an empty data dir",
			ErrOtherCluster, dir, rec.Name, rec.ClusterID, c.Join, clusterID)
	}
	return nil
}

// peerMembers asks the member at Join for the cluster's members and ID,
// through etcd's peer API.
func (c *Cluster) peerMembers(ctx context.Context) ([]membership.Member, string, error) {
	tlsConfig, err := c.TLS.info().ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("embedetcd: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.Join, "/")+"/members", nil)
	if err != nil {
		return nil, "", fmt.Errorf("embedetcd: join URL: %w", err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("embedetcd: asking %s for its cluster's members: %w", c.Join, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("embedetcd: asking %s for its cluster's members: %s", c.Join, resp.Status)
	}
	var members []membership.Member
	if err := json.NewDecoder(resp.Body).Decode(&members); err != nil {
		return nil, "", fmt.Errorf("embedetcd: the members %s lists: %w", c.Join, err)
	}
	return members, resp.Header.Get("X-Etcd-Cluster-ID"), nil
}

// addLearner adds this member to the cluster as a learner, through the
// client API of the members Join's peer API lists, and returns the
// initial cluster to start it with. A member left over under this name or
// peer URL (its data is gone: this one has none) is removed first.
func (c *Cluster) addLearner(ctx context.Context) (string, error) {
	members, _, err := c.peerMembers(ctx)
	if err != nil {
		return "", err
	}
	var endpoints []string
	for _, m := range members {
		for _, u := range m.ClientURLs {
			if strings.HasPrefix(u, "https://") {
				endpoints = append(endpoints, u)
			}
		}
	}
	if len(endpoints) == 0 {
		return "", fmt.Errorf("embedetcd: %s lists no member with an https client URL to ask to add this one", c.Join)
	}
	cli, err := c.client(endpoints)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.removeLeftover(ctx, cli); err != nil {
		return "", err
	}
	resp, err := addAsLearner(ctx, cli, c.PeerURL)
	if err != nil {
		return "", fmt.Errorf("embedetcd: adding member %s (%s) to the cluster of %s: %w", c.Name, c.PeerURL, c.Join, err)
	}
	var initial []string
	for _, m := range resp.Members {
		name := m.Name
		if m.ID == resp.Member.ID {
			name = c.Name
		}
		for _, u := range m.PeerURLs {
			initial = append(initial, name+"="+u)
		}
	}
	return strings.Join(initial, ","), nil
}

// removeLeftover removes a member named as this one or at its peer URL:
// one whose data was lost, or added by a join that failed before it
// started. A member of this name elsewhere, or at this URL under another
// name, is someone else's: an error.
func (c *Cluster) removeLeftover(ctx context.Context, cli *clientv3.Client) error {
	list, err := cli.MemberList(ctx)
	if err != nil {
		return fmt.Errorf("embedetcd: listing the members of the cluster of %s: %w", c.Join, err)
	}
	for _, m := range list.Members {
		samePeer := slices.Contains(m.PeerURLs, c.PeerURL)
		if m.Name != c.Name && !samePeer {
			continue
		}
		if !samePeer || (m.Name != "" && m.Name != c.Name) {
			return fmt.Errorf("embedetcd: the cluster has a member %q at %v already: choose another member name or peer URL, or remove it (miniapiserver etcd member remove)", m.Name, m.PeerURLs)
		}
		if _, err := cli.MemberRemove(ctx, m.ID); err != nil {
			return fmt.Errorf("embedetcd: removing the leftover member %q (%x) before adding this one again: %w", m.Name, m.ID, err)
		}
	}
	return nil
}

// addAsLearner adds a learner at peerURL, trying again while the cluster
// refuses for now: etcd adds a member only once its members have been
// connected for 5 s (a member that has just joined makes it wait), and
// one learner at a time.
func addAsLearner(ctx context.Context, cli *clientv3.Client, peerURL string) (*clientv3.MemberAddResponse, error) {
	for {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := cli.MemberAddAsLearner(attempt, []string{peerURL})
		cancel()
		if err == nil || errors.Is(err, rpctypes.ErrPeerURLExist) || errors.Is(err, rpctypes.ErrMemberExist) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (c *Cluster) client(endpoints []string) (*clientv3.Client, error) {
	tlsConfig, err := c.TLS.info().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("embedetcd: %w", err)
	}
	return clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tlsConfig, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
}

// promote makes a learner (a member that has just joined, or restarted
// before it was promoted) a voting member once it has caught up with the
// leader. Right after it starts, a member that joined may not know yet it
// is a learner: the leader, to which PromoteMember forwards the request,
// tells (it refuses while the learner lags, and answers that a voting
// member is not a learner).
//
// It returns once this member itself has applied its promotion: the
// leader answers first, and until then this member refuses the server's
// requests ("rpc not supported for learner"), which would fail its
// start's first writes.
func promote(ctx context.Context, e *embed.Etcd) error {
	for {
		_, err := e.Server.PromoteMember(ctx, uint64(e.Server.MemberID()))
		if err == nil || errors.Is(err, membership.ErrMemberNotLearner) {
			if !e.Server.IsLearner() {
				return nil
			}
			err = errors.New("promoted, but this member has not applied its promotion yet")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("embedetcd: this member was not promoted from learner in time: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
