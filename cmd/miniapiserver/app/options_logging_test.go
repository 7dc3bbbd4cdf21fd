package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// logWith parses args, validates them, and logs one record of each level
// through the handler they ask for, from this file and from
// options_logging_helper_test.go.
func logWith(t *testing.T, args ...string) (string, error) {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if err := o.Validate(); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	l := slog.New(o.Logging.handler(&buf, o.LogLevel))
	l.Debug("here debug")
	l.Log(t.Context(), slog.LevelInfo-6, "here v6")
	l.Info("here info")
	logFromHelper(l)
	return buf.String(), nil
}

func TestLoggingFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      []string
		wantNot   []string
		wantError string
	}{
		{name: "default: info, not debug", want: []string{"here info", "helper info"}, wantNot: []string{"debug", "v6"}},
		{name: "--v=4 adds debug", args: []string{"--v=4"}, want: []string{"here debug", "helper debug"}, wantNot: []string{"v6"}},
		{name: "-v 6 adds V(6)", args: []string{"-v", "6"}, want: []string{"here v6", "helper v6"}},
		{name: "--vmodule raises one file", args: []string{"--vmodule=options_logging_helper_test=4"},
			want: []string{"helper debug", "here info"}, wantNot: []string{"here debug", "helper v6"}},
		{name: "--vmodule glob", args: []string{"--vmodule=*_logging_test=6"}, want: []string{"here v6"}, wantNot: []string{"helper debug"}},
		{name: "--vmodule never lowers --v", args: []string{"--v=4", "--vmodule=options_logging_helper_test=1"}, want: []string{"helper debug"}},
		{name: "--log-level still works", args: []string{"--log-level=debug"}, want: []string{"here debug"}},
		{name: "--vmodule syntax", args: []string{"--vmodule=foo"}, wantError: `"foo" does not have the pattern=N format`},
		{name: "--vmodule with json", args: []string{"--logging-format=json", "--vmodule=foo=2"}, wantError: "--vmodule: vmodule: Forbidden: Only supported for text log format"},
		{name: "unknown format", args: []string{"--logging-format=xml"}, wantError: `--logging-format: format: Invalid value: "xml": Unsupported log format`},
		{name: "--v and --log-level", args: []string{"--v=2", "--log-level=warn"}, wantError: "--v and --log-level"},
		{name: "negative --v", args: []string{"--v=-1"}, wantError: "invalid syntax"},
		{name: "zero flush frequency", args: []string{"--log-flush-frequency=0"}, wantError: "Must be greater than zero"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := logWith(t, tc.args...)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("got error %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("log lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("log has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestLoggingFormatJSON(t *testing.T) {
	got, err := logWith(t, "--logging-format=json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2 (the info records):\n%s", len(lines), got)
	}
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		if rec["level"] != "INFO" {
			t.Errorf("level %v, want INFO", rec["level"])
		}
	}
}
