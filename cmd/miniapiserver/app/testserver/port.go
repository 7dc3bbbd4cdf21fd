package testserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
)

// Ports below this are left to the machine's services.
const lowestTestPort = 10000

// FreePort returns a loopback port free at the time of the call, for a
// test that must name a port before something listens on it.
//
// It is picked at random below the kernel's ephemeral range, not by
// binding port 0: a port from that range, once closed again, is what the
// kernel hands out next to any process binding port 0 or connecting out,
// and CI runs many test binaries at once, so the port was sometimes taken
// again before the test's server listened ("address already in use").
// Below the range only another FreePort can pick the same port.
func FreePort() (int, error) {
	if highest := ephemeralLow() - 1; highest > lowestTestPort {
		for range 100 {
			p := lowestTestPort + rand.IntN(highest-lowestTestPort+1)
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
				l.Close()
				return p, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testserver: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default where the setting cannot be read).
func ephemeralLow() int {
	low := 32768
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var lo, hi int
		if n, _ := fmt.Sscanf(string(data), "%d %d", &lo, &hi); n == 2 {
			low = lo
		}
	}
	return low
}
