package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve serves h on ln (with TLS when tlsConfig is set) until ctx ends,
// then shuts down gracefully: it stops accepting, ends every watch, and
// waits up to shutdownTimeout for the requests in flight.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConfig *tls.Config, shutdownTimeout time.Duration) error {
	// Requests get a base context that shutdown cancels: long watches end
	// at once instead of holding the shutdown to its timeout.
	baseCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug),
	}
	srv.RegisterOnShutdown(cancelRequests)
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
	if serveErr := <-done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}
