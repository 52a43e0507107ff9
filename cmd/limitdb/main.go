// Command limitdb is a rate-limiting server that speaks the Redis protocol.
//
// Usage, as redis-server: limitdb [/path/to/limitdb.conf] [--name value ...]
// Every CONFIG parameter can be given as --name value; command-line options
// are read after the file, so they win. --pprof addr and --version are
// limitdb's own.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"limitdb/procs"
	"limitdb/server"
)

const usage = `Usage: limitdb [/path/to/limitdb.conf] [options]
       limitdb -v or --version
       limitdb -h or --help

Examples:
       limitdb (run the server with default config)
       limitdb /etc/limitdb/limitdb.conf
       limitdb --port 7777 --requirepass secret
       limitdb /etc/limitdb/limitdb.conf --loglevel verbose

Every CONFIG parameter is an option (--name value), read after the file.
--pprof addr serves net/http/pprof on a loopback address.
`

// cmdLine is what the command line asks for besides config options.
type cmdLine struct {
	file    string // config file ("" when none)
	options []string
	pprof   string
	version bool
	help    bool
}

// legacyFlags are the single-dash forms of the flags the earlier
// command line (Go's flag package) took; any other "-x" is a value (as
// "-::1" in --bind 127.0.0.1 -::1).
var legacyFlags = map[string]bool{"-bind": true, "-port": true, "-dir": true, "-loglevel": true, "-version": true, "-pprof": true, "-v": true, "-h": true, "-help": true}

// parseArgs splits the arguments as redis-server does (a first argument
// not starting with "-" is the config file) and keeps the forms the
// earlier flag-based command line accepted: "--name=value" and "-name".
func parseArgs(args []string) cmdLine {
	var c cmdLine
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		c.file, args = args[0], args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if legacyFlags[strings.SplitN(a, "=", 2)[0]] {
			a = "-" + a // -port 7000 (Go flag style)
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") || strings.ContainsAny(name, " \t") {
			c.options = append(c.options, args[i])
			continue
		}
		switch strings.ToLower(name) {
		case "--version", "--v":
			c.version = true
			continue
		case "--help", "--h":
			c.help = true
			continue
		case "--pprof":
			if hasVal {
				c.pprof = val
			} else if i+1 < len(args) {
				c.pprof = args[i+1]
				i++
			}
			continue
		}
		c.options = append(c.options, name)
		if hasVal {
			c.options = append(c.options, val)
		}
	}
	return c
}

// verboseName names Redis's verbose level in the log (slog would print
// "DEBUG+2").
func verboseName(groups []string, a slog.Attr) slog.Attr {
	if lv, ok := a.Value.Any().(slog.Level); ok && a.Key == slog.LevelKey && lv == server.LevelVerbose {
		a.Value = slog.StringValue("VERBOSE")
	}
	return a
}

func main() {
	c := parseArgs(os.Args[1:])
	if c.version {
		fmt.Printf("limitdb %s (redis %s compatible)\n", server.Version, server.RedisVersion)
		return
	}
	if c.help {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(1)
	}
	// The server filters by its loglevel parameter; the handler passes all.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: verboseName}))
	srv := server.New(server.Config{Log: log, Chdir: true, Durable: true}, nil)
	if err := srv.LoadConfig(c.file, server.ArgsToOptions(c.options)); err != nil {
		fmt.Fprint(os.Stderr, err.Error())
		os.Exit(1)
	}
	log = srv.Logger()
	if c.pprof != "" {
		if err := servePprof(c.pprof); err != nil {
			log.Error("pprof", "err", err)
			os.Exit(2)
		}
		log.Info("pprof listening", "addr", c.pprof)
	}
	if err := srv.Listen(); err != nil {
		log.Error("listen failed", "err", err)
		os.Exit(1)
	}
	if err := srv.StartPersistence(); err != nil {
		log.Error("start-up failed", "err", err)
		os.Exit(1)
	}
	procs.Serve() // loaded: one P from now on (procs/DESIGN.md)
	addr := ""
	if a := srv.Addr(); a != nil {
		addr = a.String()
	}
	if a := srv.TLSAddr(); a != nil {
		addr += " tls " + a.String()
	}
	log.Info("limitdb ready to accept connections", "addr", strings.TrimSpace(addr), "version", server.Version)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go handleSignals(srv, log, sig)
	if err := srv.Serve(); err != nil {
		log.Error("serve failed", "err", err)
		os.Exit(1)
	}
	log.Info("bye")
}

// handleSignals is Redis's sigShutdownHandler and the cron's shutdown:
// SIGTERM or SIGINT shuts down as SHUTDOWN does without options (saving
// when save rules are set; Serve then returns and the process exits 0).
// If the save fails the server goes on, as Redis's does; a second SIGINT
// while a shutdown is under way exits at once with status 1.
func handleSignals(srv *server.Server, log *slog.Logger, sig chan os.Signal) {
	var busy atomic.Bool
	for s := range sig {
		name := map[os.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[s]
		if busy.Load() {
			if s == syscall.SIGINT {
				log.Warn("You insist... exiting now.")
				os.Exit(1)
			}
			continue
		}
		log.Warn("Received " + name + " scheduling shutdown...")
		busy.Store(true)
		go func() {
			if err := srv.Shutdown(server.ShutdownFlags{}); err != nil {
				log.Warn("shutdown failed; still serving", "err", err)
			}
			busy.Store(false)
		}()
	}
}
