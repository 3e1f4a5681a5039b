package controller

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// raftLogger adapts slog to the hclog.Logger hashicorp/raft logs through, so
// raft's lines carry component=raft and go where the broker's logs go.
//
// Raft logs its routine state changes at INFO (entering follower, candidate,
// leader state ...); they are demoted to DEBUG so a normal start prints only
// the controller's own "ready" line. Raft also warns "heartbeat timeout
// reached, starting election" on every start, which for a one-voter quorum
// is not a problem, so that message is demoted too.
type raftLogger struct {
	l    *slog.Logger
	name string
	args []any
}

func newRaftLogger(l *slog.Logger) hclog.Logger {
	return &raftLogger{l: l.With("component", "raft"), name: "raft"}
}

// benignWarnings are raft warnings expected in normal single-voter operation.
var benignWarnings = map[string]bool{
	"heartbeat timeout reached, starting election": true,
}

func (r *raftLogger) level(l hclog.Level, msg string) slog.Level {
	switch {
	case l <= hclog.Info:
		return slog.LevelDebug
	case l == hclog.Warn && benignWarnings[msg]:
		return slog.LevelDebug
	case l == hclog.Warn:
		return slog.LevelWarn
	}
	return slog.LevelError
}

func (r *raftLogger) Log(level hclog.Level, msg string, args ...any) {
	lv := r.level(level, msg)
	if !r.l.Enabled(context.Background(), lv) {
		return
	}
	all := append(append([]any(nil), r.args...), args...)
	for i, a := range all {
		// hclog.Fmt defers formatting to the logger; do it here.
		if f, ok := a.(hclog.Format); ok && len(f) > 0 {
			if format, ok := f[0].(string); ok {
				all[i] = fmt.Sprintf(format, f[1:]...)
			}
		}
	}
	r.l.Log(context.Background(), lv, msg, all...)
}

func (r *raftLogger) Trace(msg string, args ...any) { r.Log(hclog.Trace, msg, args...) }
func (r *raftLogger) Debug(msg string, args ...any) { r.Log(hclog.Debug, msg, args...) }
func (r *raftLogger) Info(msg string, args ...any)  { r.Log(hclog.Info, msg, args...) }
func (r *raftLogger) Warn(msg string, args ...any)  { r.Log(hclog.Warn, msg, args...) }
func (r *raftLogger) Error(msg string, args ...any) { r.Log(hclog.Error, msg, args...) }

func (r *raftLogger) enabled(l hclog.Level) bool {
	return r.l.Enabled(context.Background(), r.level(l, ""))
}

func (r *raftLogger) IsTrace() bool { return r.enabled(hclog.Trace) }
func (r *raftLogger) IsDebug() bool { return r.enabled(hclog.Debug) }
func (r *raftLogger) IsInfo() bool  { return r.enabled(hclog.Info) }
func (r *raftLogger) IsWarn() bool  { return r.enabled(hclog.Warn) }
func (r *raftLogger) IsError() bool { return r.enabled(hclog.Error) }

func (r *raftLogger) ImpliedArgs() []any { return r.args }

func (r *raftLogger) With(args ...any) hclog.Logger {
	return &raftLogger{l: r.l, name: r.name, args: append(append([]any(nil), r.args...), args...)}
}

func (r *raftLogger) Name() string { return r.name }

func (r *raftLogger) Named(name string) hclog.Logger {
	return &raftLogger{l: r.l.With("logger", r.name+"."+name), name: r.name + "." + name, args: r.args}
}

func (r *raftLogger) ResetNamed(name string) hclog.Logger {
	return &raftLogger{l: r.l.With("logger", name), name: name, args: r.args}
}

// SetLevel is ignored: the slog handler decides what is printed.
func (r *raftLogger) SetLevel(hclog.Level) {}

func (r *raftLogger) GetLevel() hclog.Level {
	for _, l := range []hclog.Level{hclog.Debug, hclog.Warn, hclog.Error} {
		if r.enabled(l) {
			return l
		}
	}
	return hclog.Off
}

func (r *raftLogger) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return slog.NewLogLogger(r.l.Handler(), slog.LevelDebug)
}

func (r *raftLogger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return r.StandardLogger(opts).Writer()
}
