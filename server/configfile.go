package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"limitdb/acl"
	"limitdb/engine"
	"limitdb/resp"
)

// fileDirectives are the config-file directives that are not CONFIG
// parameters (ACL "user" lines, …). Each gets the directive's arguments
// (without its name, at least one, as Redis requires for `user`); a
// returned error is the fatal reason. `include` is handled by the loader
// itself.
var fileDirectives = map[string]func(s *Server, args []string) error{
	"user": applyUserDirective,
}

// ConfigError is a fatal start-up configuration error. Error() is Redis
// 7.0's report for it (printed to stderr before exiting with status 1).
type ConfigError struct {
	Line   int    // 1-based line of the text being loaded (0: no line)
	Text   string // that line, trimmed
	Reason string
	Raw    bool // Reason is the whole report (a file that cannot be opened)
}

func (e *ConfigError) Error() string {
	if e.Raw {
		return e.Reason + "\n"
	}
	var b strings.Builder
	b.WriteString("\n*** FATAL CONFIG FILE ERROR (Redis " + RedisVersion + ") ***\n")
	if e.Line > 0 {
		fmt.Fprintf(&b, "Reading the configuration file, at line %d\n", e.Line)
		fmt.Fprintf(&b, ">>> '%s'\n", e.Text)
	}
	b.WriteString(e.Reason + "\n")
	return b.String()
}

// ArgsToOptions turns command-line arguments (those after the config file
// name) into config text, as Redis's main does: each "--name" starts a new
// line, each other argument is appended quoted. "--save" with no value
// becomes save "".
func ArgsToOptions(args []string) string {
	var b strings.Builder
	lastHasArg := true
	for j, a := range args {
		if lastHasArg && strings.HasPrefix(a, "--") {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(a[2:] + " ")
			if f, _ := SplitArgs(a); len(f) == 1 {
				lastHasArg = false
				nextIsOpt := j+1 < len(args) && strings.HasPrefix(args[j+1], "--")
				if strings.EqualFold(a, "--save") && (nextIsOpt || j == len(args)-1) {
					b.WriteString(`""`)
					lastHasArg = nextIsOpt
				}
			} else {
				lastHasArg = true
			}
			continue
		}
		b.WriteString(quoteArg(a) + " ")
		lastHasArg = true
	}
	return b.String()
}

// LoadConfig loads the config file at path (none when "") followed by
// options (command-line text, see ArgsToOptions): the last value of a
// parameter wins. It returns a *ConfigError for the first bad line, with
// nothing further applied. The file's absolute path is kept for CONFIG
// REWRITE.
func (s *Server) LoadConfig(path, options string) error {
	text := ""
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			return cantOpen(path, err)
		}
		s.configFile = abs
		text = string(b)
	}
	if options != "" {
		text += "\n" + options
	}
	ld := &loader{s: s}
	s.door.Lock()
	defer s.door.Unlock()
	if err := ld.load(text); err != nil {
		return err
	}
	if err := s.enterDir(); err != nil {
		return err
	}
	s.enableClusterMode() // (cluster_mode.go)
	// users of the aclfile load after the whole configuration, as Redis's
	// ACLLoadUsersAtStartup does, which aborts the start on any error
	if f := s.conf.params["aclfile"]; f != "" {
		if err := s.LoadACLFile(f); err != nil {
			return &ConfigError{Raw: true, Reason: "Aborting Redis startup because of ACL errors: " + err.Error()}
		}
	}
	s.applyConfig()
	// Redis applies requirepass to the default user first (initServer)
	// and the file's user lines after it (ACLLoadUsersAtStartup): a
	// "user default" line wins over requirepass wherever each stands.
	if r := s.auth.confDefault; r != nil {
		if _, err := s.auth.acl.SetUser(acl.DefaultName, r); err != nil {
			return &ConfigError{Raw: true, Reason: err.Error()}
		}
		s.syncAuth()
	}
	return nil
}

func cantOpen(path string, err error) *ConfigError {
	return &ConfigError{Raw: true, Reason: "Fatal error, can't open config file '" + path + "': " + errnoText(err)}
}

// errnoText is strerror's text of a path error ("No such file or directory").
func errnoText(err error) string {
	why := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) { // inside a PathError, LinkError, SyscallError
		why = errno.Error()
	} else if pe, ok := err.(*os.PathError); ok {
		why = pe.Err.Error()
	} else {
		return why
	}
	if len(why) > 0 {
		why = strings.ToUpper(why[:1]) + why[1:]
	}
	return why
}

type loader struct {
	s         *Server
	saveSeen  bool
	depth     int
	savePairs []string
}

// deprecatedDirectives are accepted and ignored, as Redis 7.0 does.
var deprecatedDirectives = map[string]bool{"list-max-ziplist-entries": true, "list-max-ziplist-value": true, "lua-replicate-commands": true}

// load applies config text line by line, as Redis's
// loadServerConfigFromString: comments and blank lines skipped, arguments
// split with Redis's quoting, the directive name case-insensitive.
func (ld *loader) load(text string) error {
	for i, line := range strings.Split(text, "\n") {
		line = strings.Trim(line, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(why string) error { return &ConfigError{Line: i + 1, Text: line, Reason: why} }
		argv, ok := SplitArgs(line)
		if !ok {
			return fail("Unbalanced quotes in configuration line")
		}
		if len(argv) == 0 {
			continue
		}
		name := strings.ToLower(argv[0])
		if p := findParam(name); p != nil {
			if why := ld.set(p, argv[1:]); why != "" {
				return fail(why)
			}
			continue
		}
		if deprecatedDirectives[name] && len(argv) == 2 {
			continue
		}
		if name == "include" && len(argv) == 2 {
			if err := ld.include(argv[1]); err != nil {
				return err
			}
			continue
		}
		if h := fileDirectives[name]; h != nil && len(argv) >= 2 {
			if err := h(ld.s, argv[1:]); err != nil {
				return fail(err.Error())
			}
			continue
		}
		return fail("Bad directive or wrong number of arguments")
	}
	return nil
}

// include loads another file (a glob pattern loads every match, none
// being fine; a plain name must exist), with its own line numbers.
func (ld *loader) include(name string) error {
	if ld.depth >= 32 {
		return &ConfigError{Raw: true, Reason: "Fatal error, config file includes nested deeper than 32 levels: '" + name + "'"}
	}
	files := []string{name}
	if strings.ContainsAny(name, "*?[") {
		files, _ = filepath.Glob(name)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return cantOpen(f, err)
		}
		ld.depth++
		err = ld.load(string(b))
		ld.depth--
		if err != nil {
			return err
		}
	}
	return nil
}

// multiArg names the parameters that take several arguments.
func multiArg(p *param) bool {
	return p.kind == pSave || p.kind == pObuf || p.kind == pOOM || p.kind == pPerc || p.name == "bind"
}

// set applies one parameter line; it returns the reason it is refused.
func (ld *loader) set(p *param, args []string) string {
	if !multiArg(p) {
		if len(args) != 1 {
			return "wrong number of arguments"
		}
	} else if len(args) == 1 && args[0] != "" {
		// one argument holding several ("--save '900 1 300 10'")
		f, ok := SplitArgs(args[0])
		if !ok {
			return "Unbalanced quotes in configuration line"
		}
		args = f
	}
	v := strings.Join(args, " ")
	if p.name == "loglevel" {
		v = legacyLogLevel(v)
	}
	if p.name == "databases" && v != p.def {
		return "limitdb has a fixed number of databases (" + p.def + ")"
	}
	if p.kind == pSave {
		// In a file, save lines add up ("save 900 1" then "save 300 10");
		// the first one replaces the default, save "" clears.
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		if _, why := p.check(strings.Join(args, " ")); why != "" {
			return why
		}
		for j, a := range args {
			if n, _ := engine.ParseIntB([]byte(a)); j%2 == 0 && n < 1 {
				return "Invalid save parameters"
			}
		}
		if !ld.saveSeen || len(args) == 0 {
			ld.savePairs = nil
		}
		ld.saveSeen = true
		ld.savePairs = append(ld.savePairs, args...)
		v = strings.Join(ld.savePairs, " ")
	}
	nv, why := ld.s.value(p, v) // a file may not ask for what CONFIG SET refuses
	if why != "" {
		return why
	}
	ld.s.conf.params[p.name] = nv
	if fn := paramApply[p.name]; fn != nil && fn.atLoad {
		fn.run(ld.s)
	}
	return ""
}

// legacyLogLevel maps the slog level words limitdb's --loglevel took
// before it had a config file onto Redis's: info → notice, warn and error
// → warning (Redis has no errors-only level).
func legacyLogLevel(v string) string {
	switch strings.ToLower(v) {
	case "info":
		return "notice"
	case "warn", "error":
		return "warning"
	}
	return v
}

// SplitArgs splits a config line into arguments with Redis's rules
// (sdssplitargs, as for inline requests: resp.SplitArgs); false for
// unbalanced quotes.
func SplitArgs(line string) ([]string, bool) {
	args, ok := resp.SplitArgs([]byte(line), nil)
	if !ok || len(args) == 0 {
		return nil, ok
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out, true
}

// quoteArg is Redis's sdscatrepr: a double-quoted string that SplitArgs
// reads back as s.
func quoteArg(s string) string {
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if c >= 0x20 && c < 0x7f {
				b = append(b, c)
			} else {
				b = fmt.Appendf(b, "\\x%02x", c)
			}
		}
	}
	return string(append(b, '"'))
}

// enterDir makes dir absolute (CONFIG GET dir shows the directory, as
// Redis's getcwd) and, for the binary, changes into it.
func (s *Server) enterDir() error {
	dir := s.conf.params["dir"]
	if s.cfg.Chdir {
		if err := os.Chdir(dir); err != nil {
			return &ConfigError{Raw: true, Reason: "Can't chdir to '" + dir + "': " + errnoText(err)}
		}
		if wd, err := os.Getwd(); err == nil {
			s.conf.params["dir"] = wd
		}
		return nil
	}
	if abs, err := filepath.Abs(dir); err == nil {
		s.conf.params["dir"] = abs
	}
	return nil
}
