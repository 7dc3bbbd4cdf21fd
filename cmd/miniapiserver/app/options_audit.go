package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
)

// AuditOptions are the flags of the audit log, with kube-apiserver's names
// and defaults but one: the mode is batch unless --audit-log-mode says
// blocking (kube's default), so that a slow disk never holds a request.
type AuditOptions struct {
	// Mode is --audit-log-mode: batch (events written from a buffer of
	// BufferSize, dropped when it is full) or blocking (written before
	// the request goes on).
	Mode       string
	PolicyFile string
	Path       string
	MaxAge     int
	MaxBackups int
	MaxSize    int
	Compress   bool
	BufferSize int
	Format     string
}

func defaultAuditOptions() AuditOptions {
	return AuditOptions{Mode: "batch", MaxAge: 366, MaxBackups: 100, MaxSize: 100, BufferSize: 10000, Format: "json"}
}

func (o *AuditOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.PolicyFile, "audit-policy-file", o.PolicyFile,
		"audit.k8s.io/v1 Policy deciding which requests are recorded and how much of them (None, Metadata, Request, RequestResponse). Without it nothing is recorded.")
	fs.StringVar(&o.Path, "audit-log-path", o.Path, "File the audit events are written to, one JSON object a line; '-' means standard out.")
	fs.IntVar(&o.MaxAge, "audit-log-maxage", o.MaxAge, "Days to keep rotated audit logs (0: no limit).")
	fs.IntVar(&o.MaxBackups, "audit-log-maxbackup", o.MaxBackups, "Rotated audit logs to keep (0: no limit).")
	fs.IntVar(&o.MaxSize, "audit-log-maxsize", o.MaxSize, "Megabytes an audit log grows to before it is rotated (0: never rotated).")
	fs.BoolVar(&o.Compress, "audit-log-compress", o.Compress, "Compress rotated audit logs with gzip.")
	fs.StringVar(&o.Mode, "audit-log-mode", o.Mode,
		"Strategy for sending audit events: blocking (kube's default) writes each event before the request goes on; batch buffers them (--audit-log-batch-buffer-size) and writes them asynchronously. blocking-strict is not supported.")
	fs.IntVar(&o.BufferSize, "audit-log-batch-buffer-size", o.BufferSize,
		"In batch mode, the events held while the log is written; when it is full, new events are dropped and counted in apiserver_audit_error_total.")
	fs.StringVar(&o.Format, "audit-log-format", o.Format, `Format of the audit log; only "json" is supported.`)
}

func (o *AuditOptions) validate() error {
	if o.Format != "json" {
		return fmt.Errorf(`--audit-log-format: %q is not supported (only "json")`, o.Format)
	}
	switch o.Mode {
	case "batch", "blocking":
	case "blocking-strict":
		return errors.New("--audit-log-mode: blocking-strict: not supported by miniapiserver: a failed write of an event does not fail its request here; use blocking or batch")
	default:
		return fmt.Errorf("--audit-log-mode: invalid audit log mode %s, allowed modes are batch,blocking,blocking-strict", o.Mode)
	}
	if o.BufferSize <= 0 {
		return errors.New("--audit-log-batch-buffer-size: must be positive")
	}
	for flag, v := range map[string]int{"--audit-log-maxage": o.MaxAge, "--audit-log-maxbackup": o.MaxBackups, "--audit-log-maxsize": o.MaxSize} {
		if v < 0 {
			return fmt.Errorf("%s: must not be negative", flag)
		}
	}
	if o.PolicyFile != "" {
		if _, err := audit.LoadPolicyFile(o.PolicyFile); err != nil {
			return fmt.Errorf("--audit-policy-file: %w", err)
		}
	}
	return nil
}

// build returns the policy and the backend writing the log, counting its
// errors in m, both nil when nothing is audited (no policy, or no log
// path).
func (o *AuditOptions) build(m *audit.Metrics) (*audit.Policy, *audit.LogBackend, error) {
	if o.PolicyFile == "" || o.Path == "" {
		return nil, nil, nil
	}
	policy, err := audit.LoadPolicyFile(o.PolicyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--audit-policy-file: %w", err)
	}
	var out io.WriteCloser
	if o.Path == "-" {
		out = nopCloser{os.Stdout}
	} else {
		// As kube's: the log's directory is created (0700) when missing.
		if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
			return nil, nil, fmt.Errorf("--audit-log-path: %w", err)
		}
		f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--audit-log-path: %w", err)
		}
		out = f
		if o.MaxSize > 0 { // lumberjack would read 0 as 100 MB
			f.Close()
			out = &lumberjack.Logger{Filename: o.Path, MaxAge: o.MaxAge, MaxBackups: o.MaxBackups, MaxSize: o.MaxSize, Compress: o.Compress}
		}
	}
	if o.Mode == "blocking" {
		return policy, audit.NewBlockingLogBackend(out, m), nil
	}
	return policy, audit.NewLogBackend(out, o.BufferSize, m), nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
