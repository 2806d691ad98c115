package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// decoder walks the YAML node tree into Config by reflection, recording
// each key's line so that every error names file, line and key.
type decoder struct {
	file  string
	env   func(string) (string, bool)
	errs  Errors
	lines map[string]int
	// allowUnset keeps an unset ${VAR} as its literal text and records it
	// in unset instead of failing.
	allowUnset bool
	unset      Errors
	// fileErrs are the errors of included files that are not about a
	// subscription: a key other than subscriptions:, a file that is not a
	// list of them. No rule is left out for them (undecoded).
	fileErrs Errors
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
	fields := fieldsOf(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := k.Value
		if path != "" {
			p = path + "." + k.Value
		}
		if seenBefore(n.Content[:i], k.Value) {
			d.errorf(k.Line, p, "duplicate key")
			continue
		}
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

// seenBefore says whether key is among the keys of pairs (a mapping's
// content: key, value, key, value...). A struct has a few keys, and a
// large configuration many structs: a map for each would cost more.
func seenBefore(pairs []*yaml.Node, key string) bool {
	for j := 0; j+1 < len(pairs); j += 2 {
		if pairs[j].Value == key {
			return true
		}
	}
	return false
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

// fieldIndex holds fieldsOf's answers: a struct's keys are worked out
// once, not for every subscription of a large configuration.
var fieldIndex sync.Map // reflect.Type → map[string][]int

// fieldsOf maps the keys of struct type t to their fields' index paths
// (structFields); the map is shared and must not be changed.
func fieldsOf(t reflect.Type) map[string][]int {
	if f, ok := fieldIndex.Load(t); ok {
		return f.(map[string][]int)
	}
	fields := map[string][]int{}
	structFields(t, nil, fields)
	fieldIndex.Store(t, fields)
	return fields
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
