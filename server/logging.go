package server

import (
	"context"
	"log/slog"
)

// Redis's log levels on slog's scale: debug and warning are slog's Debug
// and Warn, notice (Redis's default) is Info, verbose sits between.
const levelVerbose = LevelVerbose

// LevelVerbose is Redis's verbose log level on slog's scale.
const LevelVerbose = slog.LevelDebug + 2

var logLevels = map[string]slog.Level{
	"debug":   slog.LevelDebug,
	"verbose": levelVerbose,
	"notice":  slog.LevelInfo,
	"warning": slog.LevelWarn,
}

// levelHandler drops records below the `loglevel` parameter before the
// wrapped handler sees them, so CONFIG SET loglevel takes effect whatever
// level the embedding program gave its handler.
type levelHandler struct {
	h     slog.Handler
	level *slog.LevelVar
}

func (l levelHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.level.Level() && l.h.Enabled(ctx, lv)
}

func (l levelHandler) Handle(ctx context.Context, r slog.Record) error { return l.h.Handle(ctx, r) }

func (l levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return levelHandler{l.h.WithAttrs(as), l.level}
}

func (l levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{l.h.WithGroup(name), l.level}
}

// scriptLevels are Redis's LL_DEBUG … LL_WARNING (redis.log's first
// argument) on slog's scale.
var scriptLevels = [...]slog.Level{slog.LevelDebug, levelVerbose, slog.LevelInfo, slog.LevelWarn}

// scriptLog writes a script's redis.log message (engine.Engine.Log).
func (s *Server) scriptLog(level int, msg string) {
	s.log.Log(context.Background(), scriptLevels[level], msg)
}

// Logger is the server's logger: the configured one, filtered by the
// loglevel parameter.
func (s *Server) Logger() *slog.Logger { return s.log }
