package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// Serve serves h on ln (with TLS when tlsConfig is set) until ctx ends,
// then shuts down gracefully: it stops accepting, ends every watch (a
// clean end of stream: clients watch again elsewhere), and gives the
// other requests in flight up to shutdownTimeout to finish before it
// cuts them off.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConfig *tls.Config, shutdownTimeout time.Duration) error {
	baseCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	watchesCtx, endWatches := context.WithCancel(baseCtx)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return handlers.WithWatchesEnding(baseCtx, watchesCtx) },
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug),
	}
	// Watches never finish by themselves: they end when shutdown starts,
	// or they would hold it to its timeout.
	srv.RegisterOnShutdown(endWatches)
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
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
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
