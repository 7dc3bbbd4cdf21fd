package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// ServeOptions are the settings of one listener.
type ServeOptions struct {
	// ShutdownTimeout is how long the requests in flight get to finish
	// once a shutdown starts.
	ShutdownTimeout time.Duration
	// HTTP2MaxStreamsPerConnection is how many streams one HTTP/2
	// connection may have open (kube's --http2-max-streams-per-connection);
	// 0 means kube-apiserver's default, 100.
	HTTP2MaxStreamsPerConnection int
}

// http2Body99Percentile is kube-apiserver's frame size and per-stream
// upload buffer: big enough for nearly every object written in one frame,
// small enough that a buffer per stream times the streams of a connection
// stays bounded (Go's defaults are 1 MiB per stream).
const http2Body99Percentile = 256 << 10

// http2 sizes HTTP/2 as kube-apiserver does. Go's own default of 250
// streams would let one client connection carry 2.5 times the streams
// kube allows, and clients such as client-go open a new connection only
// when the server's limit is reached.
func (o ServeOptions) http2() *http.HTTP2Config {
	streams := o.HTTP2MaxStreamsPerConnection
	if streams <= 0 {
		streams = 100
	}
	return &http.HTTP2Config{
		MaxConcurrentStreams:          streams,
		MaxReadFrameSize:              http2Body99Percentile,
		MaxReceiveBufferPerStream:     http2Body99Percentile,
		MaxReceiveBufferPerConnection: http2Body99Percentile * streams,
	}
}

// Serve serves h on ln (with TLS when tlsConfig is set) until ctx ends,
// then shuts down gracefully: it stops accepting, ends every watch (a
// clean end of stream: clients watch again elsewhere), and gives the
// other requests in flight up to shutdownTimeout to finish before it
// cuts them off. A connection is closed as soon as it has no request in
// flight.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConfig *tls.Config, opts ServeOptions) error {
	baseCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	watchesCtx, endWatches := context.WithCancel(baseCtx)
	idle := newIdleConns()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return handlers.WithWatchesEnding(baseCtx, watchesCtx) },
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug),
		ConnState:         idle.track,
		HTTP2:             opts.http2(),
	}
	// Watches never finish by themselves: they end when shutdown starts,
	// or they would hold it to its timeout.
	srv.RegisterOnShutdown(endWatches)
	srv.RegisterOnShutdown(idle.closeAll)
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if err != nil {
		// Past the timeout: the requests still running are cut off.
		cancelRequests()
		srv.Close()
	}
	if serveErr := <-done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// idleConns closes HTTP/2 connections without a request in flight once
// shutdown starts. http.Server.Shutdown closes idle HTTP/1 connections
// itself, but an HTTP/2 connection it only asks to go away (GOAWAY), then
// waits until it closes: Go's HTTP/2 server gives the client a second
// (http2 goAwayTimeout) after its last stream before closing it, so every
// idle client connection would hold the shutdown for that second.
// Clients that keep a connection (client-go does) see it closed instead,
// as they would after the second; the requests in flight are not touched:
// their connection closes when they are done.
type idleConns struct {
	mu      sync.Mutex
	idle    map[net.Conn]bool // the open connections: true when idle
	closing bool
}

func newIdleConns() *idleConns { return &idleConns{idle: map[net.Conn]bool{}} }

// track is the server's ConnState hook. HTTP/2 reports a connection
// active when a stream opens, idle when its last stream closes.
func (c *idleConns) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(c.idle, conn)
	case http.StateIdle:
		if c.closing {
			delete(c.idle, conn)
			go conn.Close() // not under the hook: a TLS close may write
			return
		}
		c.idle[conn] = true
	default:
		c.idle[conn] = false
	}
}

// closeAll closes the idle connections and, from now on, each connection
// that becomes idle.
func (c *idleConns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	for conn, idle := range c.idle {
		if idle {
			delete(c.idle, conn)
			go conn.Close()
		}
	}
}
