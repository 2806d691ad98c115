package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrInvalid is wrapped by every validation error, so callers can tell a bad
// configuration from an unreadable file.
var ErrInvalid = errors.New("invalid configuration")

// Error is one problem in a configuration file.
type Error struct {
	File string
	Line int
	Key  string // dotted path, e.g. "subscriptions[2].url"
	Msg  string
	// order is File's place among the configuration's files.
	order int
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
}

func (e *Error) Unwrap() error { return ErrInvalid }

// Errors is every problem found in a configuration: the main file's, then
// each included file's, each file's in line order.
type Errors []*Error

// sort puts errors in the order Errors holds them in: by file (the main
// file first, then the included ones as include: reads them), then by
// line.
func (es Errors) sort() {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].order != es[j].order {
			return es[i].order < es[j].order
		}
		return es[i].Line < es[j].Line
	})
}

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// MaxFileSize caps a configuration file; a real one is a few KiB.
const MaxFileSize = 1 << 20

// Load reads and validates the configuration file at path, expanding
// ${VAR} from the process environment.
func Load(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, os.LookupEnv)
}

// readFile reads a configuration file: a regular file of at most
// MaxFileSize. `--config /dev/zero` used to read until memory ran out, and
// a FIFO would block the daemon's start.
func readFile(path string) ([]byte, error) {
	data, err := readRegular(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return data, nil
}

// readRegular reads a regular file of at most MaxFileSize: the main
// configuration file or an included one.
func readRegular(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Check what was opened too: the path may have been replaced since.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s is larger than %s; is it the right file?", path, ByteSize(MaxFileSize))
	}
	return data, nil
}

// Parse decodes and validates a configuration. file names the source in
// errors and anchors relative paths; lookupEnv resolves ${VAR} (nil: none).
// The files its include: names are read from disk.
func Parse(file string, data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	cfg, _, err := parse(file, data, lookupEnv, false)
	return cfg, err
}

// LoadAllowUnset is Load for commands that can do without the secrets
// (`validate --allow-unset`, `auth`): a ${VAR} naming an unset variable is
// not an error but a warning, returned with the file, line and key that use
// it, and the value keeps the literal ${VAR} text in its place. A key that
// uses an unset variable is not validated further (its real value is
// unknown); every other error is reported as Load reports it. The daemon
// and sync use Load, which refuses unset variables.
func LoadAllowUnset(path string) (*Config, Errors, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseAllowUnset(path, data, os.LookupEnv)
}

// ParseAllowUnset is Parse with LoadAllowUnset's treatment of unset
// variables.
func ParseAllowUnset(file string, data []byte, lookupEnv func(string) (string, bool)) (*Config, Errors, error) {
	return parse(file, data, lookupEnv, true)
}

func parse(file string, data []byte, lookupEnv func(string) (string, bool), allowUnset bool) (*Config, Errors, error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	cfg := Default()
	cfg.Path = file
	d := &decoder{file: file, env: lookupEnv, lines: map[string]int{}, allowUnset: allowUnset}

	root, yerrs := parseYAML(file, data)
	if yerrs != nil {
		return nil, nil, yerrs
	}
	if root == nil {
		return nil, nil, Errors{{File: file, Msg: "the configuration is empty: it needs at least the subscriptions to sync (see config.example.yaml)"}}
	}
	d.decode(root, reflect.ValueOf(cfg).Elem(), "")
	d.include(cfg, len(data))
	cfg.resolvePaths()
	// The rules are checked even when some keys could not be decoded, so
	// that one edit fixes every error at once; a key that did not decode
	// keeps its default, so what the rules say of it (and of what is
	// under it) is left out.
	errs := d.errs
	for _, e := range cfg.validate(d) {
		if !undecoded(d.errs, e.Key) {
			errs = append(errs, e)
		}
	}
	errs = append(d.withoutUnsetKeys(errs), d.fileErrs...)
	cfg.localize(d.unset)
	if len(errs) > 0 {
		cfg.localize(errs)
		errs.sort()
		return nil, d.unset, errs
	}
	cfg.Warnings = cfg.warnings(d)
	cfg.localizeWarnings(cfg.Warnings)
	return cfg, d.unset, nil
}

// parseYAML reads the first document of a file: its root node, nil when
// the file is empty.
func parseYAML(file string, data []byte) (*yaml.Node, Errors) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, Errors{{File: file, Line: yamlErrLine(err), Msg: "not valid YAML: " + yamlErrMsg(err) + tabHint(data, yamlErrLine(err))}}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null" {
		return nil, nil
	}
	return doc.Content[0], nil
}

// undecoded says whether key, or a key it is part of or that is part of it,
// is one whose value could not be decoded.
func undecoded(decodeErrs Errors, key string) bool {
	for _, e := range decodeErrs {
		if e.Key == "" {
			continue
		}
		if key == e.Key || strings.HasPrefix(key, e.Key+".") || strings.HasPrefix(key, e.Key+"[") ||
			strings.HasPrefix(e.Key, key+".") || strings.HasPrefix(e.Key, key+"[") {
			return true
		}
	}
	return false
}

// withoutUnsetKeys drops the errors about keys whose value uses an unset
// variable (allowed with allowUnset): their real value is unknown.
func (d *decoder) withoutUnsetKeys(errs Errors) Errors {
	if len(d.unset) == 0 {
		return errs
	}
	var out Errors
	for _, e := range errs {
		if !d.usesUnset(e.Key) {
			out = append(out, e)
		}
	}
	return out
}

func (d *decoder) usesUnset(key string) bool {
	for _, u := range d.unset {
		if key == u.Key || strings.HasPrefix(key, u.Key+".") || strings.HasPrefix(key, u.Key+"[") {
			return true
		}
	}
	return false
}

func yamlErrLine(err error) int {
	// yaml.v3 reports "yaml: line N: ..."
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		if j := strings.IndexByte(rest, ':'); j > 0 {
			if n, err := strconv.Atoi(rest[:j]); err == nil {
				return n
			}
		}
	}
	return 0
}

func yamlErrMsg(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(s, ": "); i >= 0 && strings.HasPrefix(s, "line ") {
		return s[i+2:]
	}
	return s
}

// tabHint is the advice for a YAML error on a line indented with a tab,
// which YAML does not allow ("found character that cannot start any
// token" says nothing of it).
func tabHint(data []byte, line int) string {
	lines := bytes.Split(data, []byte("\n"))
	for _, n := range []int{line, line + 1} { // the parser may name the line after
		if n >= 1 && n <= len(lines) {
			indent := lines[n-1][:len(lines[n-1])-len(bytes.TrimLeft(lines[n-1], " \t"))]
			if bytes.IndexByte(indent, '\t') >= 0 {
				return fmt.Sprintf(" (line %d is indented with a tab: YAML needs spaces)", n)
			}
		}
	}
	return ""
}

// resolvePaths anchors relative file paths at the configuration file's
// directory, so a config works the same from any working directory.
func (c *Config) resolvePaths() {
	if c.Path == "" {
		return
	}
	base := filepath.Dir(c.Path)
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
	abs(&c.StateDir)
	abs(&c.Google.CredentialsFile)
	abs(&c.Google.TokenFile)
	for i := range c.Accounts {
		abs(&c.Accounts[i].CredentialsFile)
		abs(&c.Accounts[i].TokenFile)
	}
	if c.Store.Driver == "sqlite" || c.Store.Driver == "" {
		abs(&c.Store.DSN)
	}
}
