package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// What include: may read in all, the main file's cap (MaxFileSize) holding
// for each file: past either, the configuration is refused.
const (
	// MaxIncludedFiles caps the files include: names, all its entries
	// together.
	MaxIncludedFiles = 10_000
	// MaxTotalSize caps the main file and every included file together.
	MaxTotalSize = 64 << 20
)

// maxTotalSize is the total cap the loader applies: MaxTotalSize, lowered
// only by this package's tests, so that reaching the cap does not mean
// parsing 64 MiB of YAML (80 s under the race detector).
var maxTotalSize = MaxTotalSize

// span is a run of Config.Subscriptions written in one file: from first to
// the next span's first.
type span struct {
	file  string
	first int
}

// SubscriptionSource is the file the i-th subscription is written in and
// its key there: "subscriptions[3]" is the fourth item of that file's list.
func (c *Config) SubscriptionSource(i int) (file, key string) {
	j := sort.Search(len(c.spans), func(k int) bool { return c.spans[k].first > i }) - 1
	if j < 0 {
		return c.Path, "subscriptions[" + strconv.Itoa(i) + "]"
	}
	return c.spans[j].file, "subscriptions[" + strconv.Itoa(i-c.spans[j].first) + "]"
}

// fileOf is the file the i-th subscription is written in.
func (c *Config) fileOf(i int) string {
	file, _ := c.SubscriptionSource(i)
	return file
}

// locate is where key is written: the file and the key as that file
// names it. The decoder and the rules name a subscription by its place in
// Config.Subscriptions, which is its place in its file's list only in the
// main file.
func (c *Config) locate(key string) (file, local string) {
	rest, ok := strings.CutPrefix(key, "subscriptions[")
	if !ok {
		return c.Path, key
	}
	n, tail, ok := strings.Cut(rest, "]")
	i, err := strconv.Atoi(n)
	if !ok || err != nil {
		return c.Path, key
	}
	file, at := c.SubscriptionSource(i)
	return file, at + tail
}

// localize makes each error name the file its key is written in and the
// key as that file names it, and ranks it by that file's place in Files.
func (c *Config) localize(errs Errors) {
	rank := c.fileRanks()
	for _, e := range errs {
		if strings.HasPrefix(e.Key, "subscriptions[") {
			e.File, e.Key = c.locate(e.Key)
		}
		e.order = rank[e.File]
	}
}

func (c *Config) localizeWarnings(ws []Warning) {
	for i := range ws {
		if strings.HasPrefix(ws[i].Key, "subscriptions[") {
			ws[i].File, ws[i].Key = c.locate(ws[i].Key)
		}
	}
}

func (c *Config) fileRanks() map[string]int {
	rank := make(map[string]int, len(c.Files))
	for i, f := range c.Files {
		if _, ok := rank[f]; !ok {
			rank[f] = i
		}
	}
	return rank
}

// elsewhere names the place of key for a message about something in file:
// its key as its own file names it, and its line, with the file's name
// when that is another file.
func (c *Config) elsewhere(d *decoder, key, file string) string {
	f, local := c.locate(key)
	if f == file {
		return fmt.Sprintf("%s, line %d", local, d.line(key))
	}
	return fmt.Sprintf("%s, %s:%d", local, f, d.line(key))
}

// include reads the files include: names, in order, appending each one's
// subscriptions to the main file's. size is the main file's.
func (d *decoder) include(cfg *Config, size int) {
	cfg.Files = []string{cfg.Path}
	cfg.spans = []span{{file: cfg.Path}}
	cfg.byID = &subscriptionIndex{}
	if len(cfg.Include) == 0 {
		return
	}
	base := filepath.Dir(cfg.Path)
	// Files are told apart by their real path: a symbolic link to a
	// file already read is that file.
	read := map[string]string{}
	if real, err := filepath.EvalSymlinks(cfg.Path); err == nil {
		read[real] = ""
	}
	total, files := size, 0
	for i, pattern := range cfg.Include {
		key := "include[" + strconv.Itoa(i) + "]"
		if d.usesUnset(key) || undecoded(d.errs, key) {
			continue
		}
		line := d.line(key)
		paths, msg := resolveInclude(base, pattern)
		if msg != "" {
			d.errorf(line, key, "%s", msg)
			continue
		}
		for _, p := range paths {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				d.errorf(line, key, "%s", notReadable(p, err))
				continue
			}
			if by, dup := read[real]; dup {
				if by == "" {
					d.errorf(line, key, "%s is the main configuration file itself", p)
				} else {
					d.errorf(line, key, "%s is already included by %s (line %d): each file is read once", p, by, d.line(by))
				}
				continue
			}
			read[real] = key
			if files++; files > MaxIncludedFiles {
				d.errorf(line, key, "include: names more than %d files in all; fewer, larger files (up to %s each) hold the same subscriptions",
					MaxIncludedFiles, ByteSize(MaxFileSize))
				return
			}
			data, err := readRegular(p)
			if err != nil {
				d.errorf(line, key, "%s", notReadable(p, err))
				continue
			}
			if total += len(data); total > maxTotalSize {
				d.errorf(line, key, "with %s the configuration's files come to more than %s, the most the main file and every included file may hold together",
					p, ByteSize(maxTotalSize))
				return
			}
			cfg.Files = append(cfg.Files, p)
			d.readIncluded(cfg, p, data, key)
		}
	}
}

// notReadable says why the included file p could not be read.
func notReadable(p string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return p + " does not exist"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", p, pe.Err)
	}
	return err.Error()
}

// resolveInclude lists the files one entry of include: names, or says
// what is wrong with it. A pattern (with *, ? or [) names the files it
// matches; a directory names its *.yaml and *.yml files; either in
// lexical order, leaving out names that begin with a dot. Naming no file
// is an error: a typo, or a directory not yet mounted, must not drop the
// subscriptions it was meant to hold (and, with sync.prune_on_remove,
// their events).
func resolveInclude(base, pattern string) ([]string, string) {
	if strings.TrimSpace(pattern) == "" {
		return nil, "must name a file, a directory or a pattern such as subscriptions.d/*.yaml"
	}
	p := filepath.Clean(pattern)
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	if strings.ContainsAny(pattern, "*?[") {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Sprintf("%q is not a valid pattern (%v)", pattern, err)
		}
		dotted := strings.HasPrefix(filepath.Base(p), ".")
		var out []string
		for _, m := range matches {
			if !dotted && strings.HasPrefix(filepath.Base(m), ".") {
				continue
			}
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				return nil, fmt.Sprintf("%q matches the directory %s: a pattern names files (name a directory alone to include its *.yaml and *.yml files)", pattern, m)
			}
			out = append(out, m)
		}
		if len(out) == 0 {
			return nil, fmt.Sprintf("%q matches no file (%s): an include that names no file is an error, so that a typo cannot drop subscriptions", pattern, p)
		}
		slices.Sort(out)
		return out, ""
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, notReadable(p, err)
	}
	if !st.IsDir() {
		return []string{p}, ""
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, notReadable(p, err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || filepath.Ext(name) != ".yaml" && filepath.Ext(name) != ".yml" {
			continue
		}
		full := filepath.Join(p, name)
		if st, err := os.Stat(full); err == nil && st.IsDir() {
			continue
		}
		out = append(out, full)
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("the directory %s holds no *.yaml or *.yml file: an include that names no file is an error, so that a missing directory cannot drop subscriptions", p)
	}
	return out, ""
}

// readIncluded decodes an included file, which holds a subscriptions:
// list and nothing else; by is the include: entry that names it.
func (d *decoder) readIncluded(cfg *Config, path string, data []byte, by string) {
	from := fmt.Sprintf("%s:%d", cfg.Path, d.line(by))
	fail := func(line int, key, format string, args ...any) {
		d.fileErrs = append(d.fileErrs, &Error{File: path, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	root, err := parseYAML(path, data)
	if err != nil {
		d.fileErrs = append(d.fileErrs, err...)
		return
	}
	if root == nil {
		fail(0, "", "the file is empty: an included file holds a subscriptions: list (included by %s; an empty list is subscriptions: [])", from)
		return
	}
	if root.Kind != yaml.MappingNode {
		fail(root.Line, "", "expected a mapping holding subscriptions: (included by %s)", from)
		return
	}
	fields := fieldsOf(reflect.TypeOf(Config{}))
	seen := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch _, known := fields[k.Value]; {
		case k.Value == "subscriptions" && seen:
			fail(k.Line, k.Value, "duplicate key")
		case k.Value == "subscriptions":
			seen = true
			d.includedSubscriptions(cfg, path, v)
		case k.Value == "include":
			fail(k.Line, k.Value, "an included file cannot include others (included by %s): name every file in the main file's include:", from)
		case known:
			fail(k.Line, k.Value, "an included file holds only subscriptions: (included by %s); %s belongs in the main file", from, k.Value)
		default:
			fail(k.Line, k.Value, "unknown key%s: an included file holds only subscriptions: (included by %s)",
				suggest(k.Value, map[string][]int{"subscriptions": nil}), from)
		}
	}
}

// includedSubscriptions appends the list n of an included file to the
// configuration's subscriptions. They are decoded under their place in
// Config.Subscriptions, as the main file's are, so that the rules see one
// list; localize names them as their file does.
func (d *decoder) includedSubscriptions(cfg *Config, path string, n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	first := len(cfg.Subscriptions)
	cfg.spans = append(cfg.spans, span{file: path, first: first})
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fileErrs = append(d.fileErrs, &Error{File: path, Line: n.Line, Key: "subscriptions", Msg: "expected a list"})
		return
	}
	cfg.Subscriptions = slices.Grow(cfg.Subscriptions, len(n.Content))[:first+len(n.Content)]
	main := d.file
	d.file = path
	for i, item := range n.Content {
		p := "subscriptions[" + strconv.Itoa(first+i) + "]"
		d.lines[p] = item.Line
		d.decode(item, reflect.ValueOf(&cfg.Subscriptions[first+i]).Elem(), p)
	}
	d.file = main
}
