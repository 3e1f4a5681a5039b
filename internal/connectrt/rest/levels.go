package rest

import (
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Log4j's levels by Kafka's names, as slog levels: slog has DEBUG, INFO,
// WARN and ERROR; TRACE and FATAL sit one step (4) beyond, OFF and ALL at
// the ends.
var levelsByName = map[string]slog.Level{
	"OFF":   slog.Level(math.MaxInt32),
	"FATAL": slog.LevelError + 4,
	"ERROR": slog.LevelError,
	"WARN":  slog.LevelWarn,
	"INFO":  slog.LevelInfo,
	"DEBUG": slog.LevelDebug,
	"TRACE": slog.LevelDebug - 4,
	"ALL":   slog.Level(math.MinInt32),
}

// ParseLevel reads a level name as log4j's Level.toLevel does, in any case.
func ParseLevel(name string) (slog.Level, bool) {
	l, ok := levelsByName[strings.ToUpper(name)]
	return l, ok
}

// LevelName is a level's Kafka name; a level between two names takes the
// lower name's (slog.LevelInfo+2 is INFO).
func LevelName(l slog.Level) string {
	best, bestLevel := "ALL", slog.Level(math.MinInt32)
	for name, nl := range levelsByName {
		if nl <= l && nl >= bestLevel {
			best, bestLevel = name, nl
		}
	}
	return best
}

// rootLogger is the root logger's name in Kafka's answers.
const rootLogger = "root"

// LevelVars are a worker's loggers as slog.LevelVars by name: a component
// takes its LevelVar (LevelVar) for its handler's level, and
// /admin/loggers reads and sets them. Names are dotted namespaces as
// Kafka's: setting "a.b" sets "a.b" and every logger whose name begins
// with it. A logger registered later takes its nearest set namespace's
// level, or the root's.
type LevelVars struct {
	now func() time.Time

	mu struct {
		sync.Mutex
		root    *levelVar
		loggers map[string]*levelVar // guarded by mu
	}
}

type levelVar struct {
	v            slog.LevelVar
	lastModified *int64 // Unix ms of the last change through SetLevel
}

// NewLevelVars makes the loggers with the root at root.
func NewLevelVars(root slog.Level) *LevelVars {
	l := &LevelVars{now: time.Now}
	l.mu.root = &levelVar{}
	l.mu.root.v.Set(root)
	l.mu.loggers = map[string]*levelVar{}
	return l
}

// LevelVar is the level of the logger named name, registered on first use.
func (l *LevelVars) LevelVar(name string) *slog.LevelVar {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &l.loggerLocked(name).v
}

// loggerLevel creates a logger with its inherited level.
func (l *LevelVars) loggerLocked(name string) *levelVar {
	if name == rootLogger {
		return l.mu.root
	}
	if lv, ok := l.mu.loggers[name]; ok {
		return lv
	}
	lv := &levelVar{}
	lv.v.Set(l.inheritedLocked(name))
	l.mu.loggers[name] = lv
	return lv
}

// inheritedLocked is the level of name's nearest existing ancestor.
func (l *LevelVars) inheritedLocked(name string) slog.Level {
	for i := strings.LastIndexByte(name, '.'); i > 0; i = strings.LastIndexByte(name[:i], '.') {
		if p, ok := l.mu.loggers[name[:i]]; ok {
			return p.v.Level()
		}
	}
	return l.mu.root.v.Level()
}

// Levels is every logger and the root.
func (l *LevelVars) Levels() map[string]LoggerLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]LoggerLevel, len(l.mu.loggers)+1)
	for name, lv := range l.mu.loggers {
		out[name] = lv.entity()
	}
	out[rootLogger] = l.mu.root.entity()
	return out
}

// Level is one logger's level ("root" in any case is the root).
func (l *LevelVars) Level(name string) (LoggerLevel, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.EqualFold(name, rootLogger) {
		return l.mu.root.entity(), true
	}
	lv, ok := l.mu.loggers[name]
	if !ok {
		return LoggerLevel{}, false
	}
	return lv.entity(), true
}

// SetLevel sets namespace and the loggers whose names begin with it (as
// Kafka matches them, by prefix), creating namespace when no logger has
// that name; "root" sets every logger. It answers the loggers whose level
// changed.
func (l *LevelVars) SetLevel(namespace string, level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now().UnixMilli()
	var changed []string
	set := func(name string, lv *levelVar) {
		if lv.v.Level() == level {
			return
		}
		lv.v.Set(level)
		lv.lastModified = &now
		changed = append(changed, name)
	}
	if strings.EqualFold(namespace, rootLogger) {
		set(rootLogger, l.mu.root)
	} else {
		l.loggerLocked(namespace)
	}
	for name, lv := range l.mu.loggers {
		if strings.EqualFold(namespace, rootLogger) || strings.HasPrefix(name, namespace) {
			set(name, lv)
		}
	}
	slices.Sort(changed)
	return changed
}

func (lv *levelVar) entity() LoggerLevel {
	return LoggerLevel{Level: LevelName(lv.v.Level()), LastModified: lv.lastModified}
}
