package rest

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLevelVars: a namespace's level reaches every logger under it (by
// Kafka's prefix match) and the slog handlers built on their LevelVars;
// only the loggers whose level changed are answered; a logger made later
// inherits its nearest set namespace.
func TestLevelVars(t *testing.T) {
	l := NewLevelVars(slog.LevelInfo)
	l.now = func() time.Time { return time.UnixMilli(1234) }
	var buf bytes.Buffer
	source := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: l.LevelVar("org.apache.kafka.connect.file.FileStreamSourceTask")}))
	l.LevelVar("org.apache.kafka.connect.runtime.Worker")

	source.Debug("hidden")
	changed := l.SetLevel("org.apache.kafka.connect.file", slog.LevelDebug)
	want := []string{"org.apache.kafka.connect.file", "org.apache.kafka.connect.file.FileStreamSourceTask"}
	if !slices.Equal(changed, want) {
		t.Errorf("changed %v; want %v", changed, want)
	}
	source.Debug("shown")
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), "shown") {
		t.Errorf("the handler's level did not follow: %q", buf.String())
	}
	if again := l.SetLevel("org.apache.kafka.connect.file", slog.LevelDebug); len(again) != 0 {
		t.Errorf("setting the same level changed %v", again)
	}
	got, ok := l.Level("org.apache.kafka.connect.file.FileStreamSourceTask")
	if !ok || got.Level != "DEBUG" || got.LastModified == nil || *got.LastModified != 1234 {
		t.Errorf("level %+v, %v", got, ok)
	}
	if w, _ := l.Level("org.apache.kafka.connect.runtime.Worker"); w.Level != "INFO" || w.LastModified != nil {
		t.Errorf("an untouched logger: %+v", w)
	}
	if later := l.LevelVar("org.apache.kafka.connect.file.FileStreamSinkTask"); later.Level() != slog.LevelDebug {
		t.Errorf("a later logger took %v, not its namespace's DEBUG", later.Level())
	}
	if _, ok := l.Level("no.such"); ok {
		t.Error("an unknown logger was found")
	}

	// root sets everything, root included.
	all := l.SetLevel("ROOT", slog.LevelError)
	if len(all) != 5 || !source.Enabled(context.Background(), slog.LevelError) || source.Enabled(context.Background(), slog.LevelWarn) {
		t.Errorf("root changed %v", all)
	}
	if levels := l.Levels(); levels["root"].Level != "ERROR" || len(levels) != 5 {
		t.Errorf("levels %v", levels)
	}
}

func TestLevelNames(t *testing.T) {
	for _, name := range []string{"OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL"} {
		l, ok := ParseLevel(strings.ToLower(name))
		if !ok || LevelName(l) != name {
			t.Errorf("%s: %v %v -> %s", name, l, ok, LevelName(l))
		}
	}
	if _, ok := ParseLevel("VERBOSE"); ok {
		t.Error("VERBOSE parsed")
	}
	if LevelName(slog.LevelInfo+2) != "INFO" {
		t.Errorf("INFO+2 is %s", LevelName(slog.LevelInfo+2))
	}
}
