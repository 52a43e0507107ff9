// Command limitdb is a rate-limiting server that speaks the Redis protocol.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"limitdb/server"
)

func main() {
	bind := flag.String("bind", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 6379, "TCP port")
	dir := flag.String("dir", ".", "data directory")
	level := flag.String("loglevel", "info", "log level: debug, info, warn, error")
	version := flag.Bool("version", false, "print the version and exit")
	requirePass := flag.String("requirepass", "", "password of the default user (empty: none)")
	aclFile := flag.String("aclfile", "", "ACL file of users, loaded at start-up (ACL LOAD/SAVE use it)")
	pprofAddr := flag.String("pprof", "", "serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060); empty: off")
	flag.Parse()
	if *version {
		fmt.Printf("limitdb %s (redis %s compatible)\n", server.Version, server.RedisVersion)
		return
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(*level))); err != nil {
		fmt.Fprintf(os.Stderr, "limitdb: bad --loglevel %q\n", *level)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	if *pprofAddr != "" {
		if err := servePprof(*pprofAddr); err != nil {
			log.Error("pprof", "err", err)
			os.Exit(2)
		}
		log.Info("pprof listening", "addr", *pprofAddr)
	}
	srv := server.New(server.Config{
		Addr: net.JoinHostPort(*bind, strconv.Itoa(*port)),
		Dir:  *dir,
		Log:  log,

		RequirePass: *requirePass,
	}, nil)
	if *aclFile != "" {
		if err := srv.LoadACLFile(*aclFile); err != nil {
			log.Error("aclfile", "err", err)
			os.Exit(1)
		}
	}
	if err := srv.Listen(); err != nil {
		log.Error("listen failed", "err", err)
		os.Exit(1)
	}
	log.Info("limitdb ready to accept connections", "addr", srv.Addr().String(), "version", server.Version)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		log.Info("shutting down", "signal", s.String())
		srv.Close()
	}()
	if err := srv.Serve(); err != nil {
		log.Error("serve failed", "err", err)
		os.Exit(1)
	}
	log.Info("bye")
}
