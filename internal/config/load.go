package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// Errors is every problem found in one file, in file order.
type Errors []*Error

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
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("config: %s is not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	// Check what was opened too: the path may have been replaced since.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("config: %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("config: %s is larger than %s; is it the right file?", path, ByteSize(MaxFileSize))
	}
	return data, nil
}

// Parse decodes and validates a configuration. file names the source in
// errors and anchors relative paths; lookupEnv resolves ${VAR} (nil: none).
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

	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, Errors{{File: file, Line: yamlErrLine(err), Msg: "not valid YAML: " + yamlErrMsg(err) + tabHint(data, yamlErrLine(err))}}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null" {
		return nil, nil, Errors{{File: file, Msg: "the configuration is empty: it needs at least the subscriptions to sync (see config.example.yaml)"}}
	}
	d.decode(doc.Content[0], reflect.ValueOf(cfg).Elem(), "")
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
	if errs := d.withoutUnsetKeys(errs); len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
		return nil, d.unset, errs
	}
	cfg.Warnings = cfg.warnings(d)
	return cfg, d.unset, nil
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

type decoder struct {
	file  string
	env   func(string) (string, bool)
	errs  Errors
	lines map[string]int
	// allowUnset keeps an unset ${VAR} as its literal text and records it
	// in unset instead of failing.
	allowUnset bool
	unset      Errors
}

func (d *decoder) errorf(line int, key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// line is the line of key, or of its nearest recorded parent.
func (d *decoder) line(key string) int {
	for key != "" {
		if l, ok := d.lines[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

var (
	durationType = reflect.TypeOf(Duration(0))
	byteSizeType = reflect.TypeOf(ByteSize(0))
)

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // "key:" with nothing after it keeps the default
	}
	switch v.Type() {
	case durationType:
		d.decodeParsed(n, v, path, func(s string) (any, error) { return ParseDuration(s) })
		return
	case byteSizeType:
		d.decodeParsed(n, v, path, func(s string) (any, error) { return ParseByteSize(s) })
		return
	case reminderSettingType:
		d.decodeReminderSetting(n, v, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String, reflect.Int, reflect.Int64, reflect.Float64, reflect.Bool:
		if s, ok := d.scalar(n, path); ok {
			d.decodeScalar(n, v, path, s)
		}
	default:
		d.errorf(n.Line, path, "unsupported type %s", v.Type())
	}
}

// decodeParsed sets v to what parse makes of the scalar n.
func (d *decoder) decodeParsed(n *yaml.Node, v reflect.Value, path string, parse func(string) (any, error)) {
	s, ok := d.scalar(n, path)
	if !ok {
		return
	}
	x, err := parse(s)
	if err != nil {
		d.errorf(n.Line, path, "%v", err)
		return
	}
	v.Set(reflect.ValueOf(x))
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n.Line, path, "expected a list")
		return
	}
	sl := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.lines[p] = item.Line
		d.decode(item, sl.Index(i), p)
	}
	v.Set(sl)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, path, "expected a mapping of names to values")
		return
	}
	m := reflect.MakeMap(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := path + "." + k.Value
		d.lines[p] = k.Line
		if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			d.errorf(k.Line, p, "duplicate key")
			continue
		}
		ev := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, ev, p)
		m.SetMapIndex(reflect.ValueOf(k.Value), ev)
	}
	v.Set(m)
}

// decodeScalar sets a string, number or boolean from its text s.
func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(s, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			d.errorf(n.Line, path, "%q is out of range", s)
			return
		}
		if err != nil {
			d.errorf(n.Line, path, "expected a whole number, got %q", s)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.errorf(n.Line, path, "expected a finite number, got %q", s)
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		switch strings.ToLower(s) {
		case "true", "yes", "on":
			v.SetBool(true)
		case "false", "no", "off":
			v.SetBool(false)
		default:
			d.errorf(n.Line, path, "expected true or false, got %q", s)
		}
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, path, "expected a mapping of keys to values")
		return
	}
	fields := map[string][]int{}
	structFields(v.Type(), nil, fields)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := k.Value
		if path != "" {
			p = path + "." + k.Value
		}
		if seen[k.Value] {
			d.errorf(k.Line, p, "duplicate key")
			continue
		}
		seen[k.Value] = true
		idx, ok := fields[k.Value]
		if !ok {
			d.errorf(k.Line, p, "unknown key%s", suggest(k.Value, fields))
			continue
		}
		d.lines[p] = k.Line
		if v.Type() == windowType && k.Value == "past" {
			d.decodeWindowPast(val, v.Addr().Interface().(*Window), p)
			continue
		}
		d.decode(val, v.FieldByIndex(idx), p)
	}
}

var windowType = reflect.TypeOf(Window{})

// decodeWindowPast reads window.past: a duration, 0 (unbounded) or now
// (future events only).
func (d *decoder) decodeWindowPast(n *yaml.Node, w *Window, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	s, ok := d.scalar(n, path)
	if !ok {
		return
	}
	if strings.EqualFold(strings.TrimSpace(s), PastNow) {
		w.Past, w.PastNow = 0, true
		return
	}
	v, err := ParseDuration(s)
	if err != nil {
		d.errorf(n.Line, path, "%v; or now for future events only, 0 for no limit", err)
		return
	}
	w.Past, w.PastNow = v, false
}

// structFields maps a struct's keys to their fields' index paths; the keys
// of a field tagged `yaml:",inline"` are the struct's own.
func structFields(t reflect.Type, at []int, fields map[string][]int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")
		idx := append(slices.Clone(at), i)
		switch {
		case len(tag) > 1 && tag[1] == "inline" && f.Type.Kind() == reflect.Struct:
			structFields(f.Type, idx, fields)
		case tag[0] != "" && tag[0] != "-":
			fields[tag[0]] = idx
		}
	}
}

func suggest(key string, fields map[string][]int) string {
	best, bestDist := "", 3
	for f := range fields {
		if dist := levenshtein(key, f); dist < bestDist || dist == bestDist && f < best {
			best, bestDist = f, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// scalar returns the node's value with ${VAR} expanded.
func (d *decoder) scalar(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n.Line, path, "expected a single value")
		return "", false
	}
	lookup := d.env
	if d.allowUnset {
		lookup = func(name string) (string, bool) {
			if v, ok := d.env(name); ok {
				return v, true
			}
			d.unset = append(d.unset, &Error{File: d.file, Line: n.Line, Key: path,
				Msg: fmt.Sprintf("environment variable %s is not set", name)})
			return "${" + name + "}", true
		}
	}
	s, err := expandEnv(n.Value, lookup)
	if err != nil {
		d.errorf(n.Line, path, "%v", err)
		return "", false
	}
	return s, true
}

// expandEnv replaces ${NAME} with the environment variable NAME; "$${" is a
// literal "${". An unset variable is an error (a missing secret must not turn
// into an empty header silently). The value never appears in errors.
func expandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in value")
		}
		name := s[i+2 : i+end]
		if !validEnvName(name) {
			return "", fmt.Errorf("invalid environment variable name %q", name)
		}
		val, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		b.WriteString(val)
		i += end + 1
	}
	return b.String(), nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
