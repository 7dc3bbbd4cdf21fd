package embedetcd

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestStartPicksAgainWhenPortTaken: a port found free can be taken by
// another process before etcd listens on it (CI runs many test binaries
// at once); Start then picks other ports instead of failing.
func TestStartPicksAgainWhenPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	pick := freePort
	handedOut := 0
	freePort = func() (int, error) {
		handedOut++
		if handedOut == 1 {
			return takenPort, nil
		}
		return pick()
	}
	defer func() { freePort = pick }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{Dir: t.TempDir(), UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		t.Fatalf("Start with its first port taken: %v", err)
	}
	defer s.Stop()
	if handedOut < 3 {
		t.Fatalf("Start asked for %d free ports, want the taken one and two more", handedOut)
	}
	u := s.ClientURL()
	if _, port, _ := net.SplitHostPort(u[len("http://"):]); port == "" || port == strconv.Itoa(takenPort) {
		t.Fatalf("client URL %s uses the taken port %d", u, takenPort)
	}
}
