package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

// LoggingOptions are kube-apiserver's logging flags (component-base's
// logs/api/v1), applied to this server's log/slog logger. klog's
// verbosity V(n) is slog's level Info-n: --v=4 shows Debug, as kube's
// V(4) is its debug level, and Info, Warn and Error always show, as
// klog's Info (V(0)), Warning and Error do.
type LoggingOptions struct {
	// Verbosity is --v, klog's global verbosity.
	Verbosity uint32
	// VModule is --vmodule: per source file verbosities, first match wins.
	VModule vmodule
	// Format is --logging-format: text or json.
	Format string
	// FlushFrequency is --log-flush-frequency. This server's logs are
	// written unbuffered, so every frequency is met; it is validated as
	// kube validates it.
	FlushFrequency time.Duration
}

func defaultLoggingOptions() LoggingOptions {
	return LoggingOptions{Format: "text", FlushFrequency: 5 * time.Second}
}

func (o *LoggingOptions) addFlags(fs *pflag.FlagSet) {
	fs.VarP(verbosityValue{&o.Verbosity}, "v", "v",
		"number for the log level verbosity (klog's: 0 logs Info, Warning and Error; 4 and more add Debug)")
	fs.Var(&o.VModule, "vmodule",
		"comma-separated list of pattern=N settings for file-filtered logging (only works for text log format): a Go source file whose name without .go matches pattern logs at verbosity N")
	fs.StringVar(&o.Format, "logging-format", o.Format, `Sets the log format. Permitted formats: "json", "text".`)
	fs.DurationVar(&o.FlushFrequency, "log-flush-frequency", o.FlushFrequency,
		"Maximum number of seconds between log flushes (this server writes its logs unbuffered: every value is met)")
}

// validate checks the flags as kube's logsapi.Validate does, with its
// messages.
func (o *LoggingOptions) validate(logLevel string) error {
	if o.FlushFrequency <= 0 {
		return fmt.Errorf("--log-flush-frequency: flushFrequency: Invalid value: %q: Must be greater than zero", o.FlushFrequency)
	}
	switch o.Format {
	case "text", "json":
	default:
		return fmt.Errorf("--logging-format: format: Invalid value: %q: Unsupported log format", o.Format)
	}
	if len(o.VModule) > 0 && o.Format != "text" {
		return fmt.Errorf("--vmodule: vmodule: Forbidden: Only supported for text log format")
	}
	// --log-level is this server's older knob; one level is asked for.
	if o.Verbosity != 0 && logLevel != "info" {
		return fmt.Errorf("--v and --log-level: set one or the other")
	}
	return nil
}

// verbosityLevel is the slog level of klog's V(v).
func verbosityLevel(v uint32) slog.Level { return slog.LevelInfo - slog.Level(v) }

// handler is the slog handler the flags ask for, writing to w: its
// minimum level is --log-level's, or --v's, lowered per source file by
// --vmodule.
func (o *LoggingOptions) handler(w io.Writer, logLevel string) slog.Handler {
	var level slog.Level
	if logLevel != "info" {
		_ = level.UnmarshalText([]byte(logLevel)) // validated
	} else {
		level = verbosityLevel(o.Verbosity)
	}
	lowest := level
	for _, m := range o.VModule {
		lowest = min(lowest, verbosityLevel(m.verbosity))
	}
	opts := &slog.HandlerOptions{Level: lowest}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if o.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	if len(o.VModule) == 0 {
		return h
	}
	return &vmoduleHandler{next: h, level: level, lowest: lowest, modules: o.VModule, levels: &sync.Map{}}
}

// verbosityValue is --v: as kube's, a non-negative int32.
type verbosityValue struct{ v *uint32 }

func (v verbosityValue) String() string { return strconv.FormatUint(uint64(*v.v), 10) }
func (v verbosityValue) Type() string   { return "Level" }
func (v verbosityValue) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		return err
	}
	*v.v = uint32(n)
	return nil
}

// vmodule is --vmodule's list, parsed as component-base parses it (its
// error messages too).
type vmodule []vmoduleItem

type vmoduleItem struct {
	pattern   string
	verbosity uint32
}

func (m *vmodule) String() string {
	parts := make([]string, len(*m))
	for i, item := range *m {
		parts[i] = fmt.Sprintf("%s=%d", item.pattern, item.verbosity)
	}
	return strings.Join(parts, ",")
}

func (m *vmodule) Type() string { return "pattern=N,..." }

func (m *vmodule) Set(value string) error {
	for _, pat := range strings.Split(value, ",") {
		if pat == "" {
			continue // a trailing comma, as kube allows
		}
		patLev := strings.Split(pat, "=")
		if len(patLev) != 2 || patLev[0] == "" || patLev[1] == "" {
			return fmt.Errorf("%q does not have the pattern=N format", pat)
		}
		v, err := strconv.ParseUint(patLev[1], 10, 31)
		if err != nil {
			return fmt.Errorf("parsing verbosity in %q: %v", pat, err)
		}
		*m = append(*m, vmoduleItem{pattern: patLev[0], verbosity: uint32(v)})
	}
	return nil
}

// level is the verbosity of file (a path): klog's rule, the first
// pattern that matches the file's base name without .go, by
// filepath.Match; ok is false when none does.
func (m vmodule) level(file string) (v uint32, ok bool) {
	name := strings.TrimSuffix(filepath.Base(file), ".go")
	for _, item := range m {
		if matched, _ := filepath.Match(item.pattern, name); matched {
			return item.verbosity, true
		}
	}
	return 0, false
}

// vmoduleHandler drops the records below the level of the source file
// that logged them: --vmodule's verbosity where a pattern matches (or
// --v's, when that is more verbose, as klog), else the global level.
// The level of each call site is computed once.
type vmoduleHandler struct {
	next          slog.Handler
	level, lowest slog.Level
	modules       vmodule
	levels        *sync.Map // program counter -> slog.Level
}

// Enabled cannot know the caller: it lets through what some file may log.
func (h *vmoduleHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.lowest && h.next.Enabled(ctx, l)
}

func (h *vmoduleHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.levelAt(r.PC) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *vmoduleHandler) levelAt(pc uintptr) slog.Level {
	if pc == 0 {
		return h.level
	}
	if l, ok := h.levels.Load(pc); ok {
		return l.(slog.Level)
	}
	frame, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	l := h.level
	if v, ok := h.modules.level(frame.File); ok {
		l = min(l, verbosityLevel(v))
	}
	h.levels.Store(pc, l)
	return l
}

func (h *vmoduleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	return &c
}

func (h *vmoduleHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	return &c
}
