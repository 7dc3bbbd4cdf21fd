package apiserver

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apiservertest"
)

// TestServeHTTP2Settings reads the SETTINGS frame a client gets on
// connecting: the stream limit and frame size must be kube-apiserver's, or
// clients would multiplex more streams per connection than kube lets them.
func TestServeHTTP2Settings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		streams int
		want    uint32
	}{
		{"default", 0, 100},
		{"flag", 42, 42},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			settings := serverSettings(t, ServeOptions{ShutdownTimeout: time.Second, HTTP2MaxStreamsPerConnection: tc.streams})
			if got := settings[http2.SettingMaxConcurrentStreams]; got != tc.want {
				t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS = %d, want %d", got, tc.want)
			}
			if got := settings[http2.SettingMaxFrameSize]; got != http2Body99Percentile {
				t.Errorf("SETTINGS_MAX_FRAME_SIZE = %d, want %d", got, http2Body99Percentile)
			}
			if got := settings[http2.SettingInitialWindowSize]; got != http2Body99Percentile {
				t.Errorf("SETTINGS_INITIAL_WINDOW_SIZE = %d, want %d", got, http2Body99Percentile)
			}
		})
	}
}

// serverSettings serves on a loopback port with opts and returns the
// settings of the server's first SETTINGS frame.
func serverSettings(t *testing.T, opts ServeOptions) map[http2.SettingID]uint32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, http.NotFoundHandler(), testTLSConfig(t), opts)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && err != http.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})

	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	framer := http2.NewFramer(conn, conn)
	if err := framer.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		f, err := framer.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's SETTINGS: %v", err)
		}
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			continue
		}
		settings := map[http2.SettingID]uint32{}
		sf.ForeachSetting(func(s http2.Setting) error {
			settings[s.ID] = s.Val
			return nil
		})
		return settings
	}
}

func testTLSConfig(t *testing.T) *tls.Config {
	t.Helper()
	return &tls.Config{
		Certificates: []tls.Certificate{apiservertest.Localhost(t)},
		NextProtos:   []string{"h2", "http/1.1"},
	}
}
