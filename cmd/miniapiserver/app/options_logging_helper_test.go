package app

import (
	"context"
	"log/slog"
)

// logFromHelper logs from a second source file, for --vmodule's tests.
func logFromHelper(l *slog.Logger) {
	l.Debug("helper debug")
	l.Log(context.Background(), slog.LevelInfo-6, "helper v6")
	l.Info("helper info")
}
