package nodeproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/apimachinery/pkg/util/remotecommand"
)

// fakeKubelet is a kubelet's HTTPS server as far as the API server uses
// it: container logs, exec and attach (SPDY, remotecommand v4), attach
// over WebSocket, port forwarding (SPDY) and /healthz for nodes/proxy.
// It answers only clients with a certificate of the PKI's client CA, and
// remembers the name of each.
type fakeKubelet struct {
	addr *net.TCPAddr
	mu   sync.Mutex
	// clients are the certificate names of the requests served.
	clients []string
	// held are the followed logs that wait, after their first line, for
	// the test to release them (by pod name).
	held map[string]chan struct{}
}

// startKubelet serves a fake kubelet on ip until the package's tests end.
func startKubelet(pki *kubeletPKI, ip net.IP) (*fakeKubelet, func(), error) {
	tlsConfig, err := pki.serverTLS(ip)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		return nil, nil, err
	}
	k := &fakeKubelet{addr: ln.Addr().(*net.TCPAddr), held: map[string]chan struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", k.logs)
	mux.HandleFunc("/exec/{ns}/{pod}/{container}", k.exec)
	mux.HandleFunc("/attach/{ns}/{pod}/{container}", k.attach)
	mux.HandleFunc("/portForward/{ns}/{pod}", k.portForward)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ok %s %s", r.Method, r.URL.RequestURI())
	})
	srv := &http.Server{Handler: k.recordClient(mux), TLSConfig: tlsConfig, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return k, func() { _ = srv.Close() }, nil
}

func (k *fakeKubelet) recordClient(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.clients = append(k.clients, r.TLS.PeerCertificates[0].Subject.CommonName)
		k.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// clientNames are the certificate names of the requests served so far.
func (k *fakeKubelet) clientNames() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.clients...)
}

// hold makes the followed log of pod wait after its first line until
// the returned function is called.
func (k *fakeKubelet) hold(pod string) func() {
	ch := make(chan struct{})
	k.mu.Lock()
	k.held[pod] = ch
	k.mu.Unlock()
	return func() { close(ch) }
}

// logs writes five lines naming the container and the query the kubelet
// got (tailLines keeps the last ones). A held followed log writes its
// first line, flushes, and writes the rest once released.
func (k *fakeKubelet) logs(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("container") == "bulk" {
		bulkLog(w)
		return
	}
	var lines []string
	for i := 1; i <= 5; i++ {
		lines = append(lines, fmt.Sprintf("%s/%s line %d", r.PathValue("pod"), r.PathValue("container"), i))
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil && n < len(lines) {
		lines = lines[len(lines)-n:]
	}
	lines = append(lines, "query: "+r.URL.RawQuery)
	k.mu.Lock()
	held := k.held[r.PathValue("pod")]
	k.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	for i, line := range lines {
		fmt.Fprintln(w, line)
		if i == 0 && held != nil && r.URL.Query().Get("follow") == "true" {
			http.NewResponseController(w).Flush()
			select {
			case <-held:
			case <-r.Context().Done():
				return
			case <-time.After(time.Minute):
				return
			}
		}
	}
}

// refuseWebSocket answers a WebSocket upgrade as a kubelet that speaks
// only SPDY: 400, so that clients fall back to SPDY.
func refuseWebSocket(w http.ResponseWriter, r *http.Request) bool {
	if !websocket.IsWebSocketUpgrade(r) {
		return false
	}
	http.Error(w, "websocket streams are not served by this kubelet", http.StatusBadRequest)
	return true
}

// streams upgrades r to SPDY with one of protocols and returns the
// connection and the first n streams the client opens, by type.
func streams(w http.ResponseWriter, r *http.Request, protocols []string, n int) (httpstream.Connection, map[string]httpstream.Stream, error) {
	if _, err := httpstream.Handshake(r, w, protocols); err != nil {
		return nil, nil, err
	}
	ch := make(chan httpstream.Stream, n)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		ch <- s
		return nil
	})
	if conn == nil {
		return nil, nil, fmt.Errorf("no SPDY upgrade")
	}
	got := map[string]httpstream.Stream{}
	for len(got) < n {
		select {
		case s := <-ch:
			got[s.Headers().Get("streamType")] = s
		case <-time.After(30 * time.Second):
			conn.Close()
			return nil, nil, fmt.Errorf("only %d of %d streams", len(got), n)
		}
	}
	return conn, got, nil
}

// exec runs "a command": it writes the command and container to stdout,
// then copies stdin to stdout, and reports success (remotecommand v4).
func (k *fakeKubelet) exec(w http.ResponseWriter, r *http.Request) {
	if refuseWebSocket(w, r) {
		return
	}
	q := r.URL.Query()
	n := 1 // the error stream
	for _, p := range []string{"input", "output", "error", "tty"} {
		if q.Get(p) == "1" {
			n++
		}
	}
	conn, got, err := streams(w, r, []string{remotecommand.StreamProtocolV4Name}, n)
	if err != nil {
		return
	}
	defer conn.Close()
	if out := got["stdout"]; out != nil {
		fmt.Fprintf(out, "%s ran %q\n", r.PathValue("container"), q["command"])
		if in := got["stdin"]; in != nil {
			_, _ = io.Copy(out, in)
		}
		out.Close()
	}
	status, _ := json.Marshal(metav1.Status{Status: metav1.StatusSuccess})
	_, _ = got["error"].Write(status)
	got["error"].Close()
}

// attach echoes WebSocket messages (v5.channel.k8s.io frames: a channel
// byte, then data) back on stdout's channel.
func (k *fakeKubelet) attach(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "attach is served over WebSocket only by this kubelet", http.StatusBadRequest)
		return
	}
	up := websocket.Upgrader{Subprotocols: []string{remotecommand.StreamProtocolV5Name}}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil || len(msg) == 0 {
			return
		}
		reply := append([]byte{remotecommand.StreamStdOut}, []byte("echo "+string(msg[1:]))...)
		if err := conn.WriteMessage(websocket.BinaryMessage, reply); err != nil {
			return
		}
	}
}

// portForward answers every forwarded connection with what it reads,
// prefixed by the port it was meant for.
func (k *fakeKubelet) portForward(w http.ResponseWriter, r *http.Request) {
	if refuseWebSocket(w, r) {
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{portforward.PortForwardV1Name}); err != nil {
		return
	}
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		go func() {
			<-replySent
			defer s.Close()
			if s.Headers().Get("streamType") != "data" {
				return // no errors to report
			}
			buf := make([]byte, 4096)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					fmt.Fprintf(s, "port %s: %s", s.Headers().Get("port"), strings.ToUpper(string(buf[:n])))
				}
				if err != nil {
					return
				}
			}
		}()
		return nil
	})
	if conn != nil {
		<-conn.CloseChan()
	}
}

// bulkLogSize is the size of the log of a container named bulk.
const bulkLogSize = 64 << 20

// bulkLog writes bulkLogSize bytes of 128-byte lines.
func bulkLog(w io.Writer) {
	line := []byte(strings.Repeat("x", 127) + "\n")
	for written := 0; written < bulkLogSize; written += len(line) {
		if _, err := w.Write(line); err != nil {
			return
		}
	}
}
