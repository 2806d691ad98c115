package calsyncd_test

import (
	"go/build"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/calsyncd/calsyncd"

// rule is one row of docs/architecture.md's package table.
type rule struct {
	any   bool            // may import anything
	may   map[string]bool // packages of ours it may import
	never []string        // import path prefixes it must not reach
	tests bool            // its tests must not reach them either
}

var google = []string{"google.golang.org/", "golang.org/x/oauth2", "cloud.google.com/"}
var theStore = []string{module + "/internal/store", "github.com/mattn/go-sqlite3", "github.com/jackc/pgx"}

// testsToo is the wording that holds a row's tests to its "must never
// import" cell.
const testsToo = "(its tests too)"

// readRules parses the package table of docs/architecture.md.
func readRules(t *testing.T) map[string]rule {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile("`([^`]+)`")
	rules := map[string]rule{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := code.FindStringSubmatch(cells[1])[1]
		r := rule{may: map[string]bool{}}
		if strings.TrimSpace(cells[3]) == "anything" {
			r.any = true
		}
		for _, m := range code.FindAllStringSubmatch(cells[3], -1) {
			r.may[ourPath(m[1])] = true
		}
		never := cells[4]
		if strings.Contains(never, "Google") {
			r.never = append(r.never, google...)
		}
		if strings.Contains(never, "the store") {
			r.never = append(r.never, theStore...)
		}
		for _, m := range code.FindAllStringSubmatch(never, -1) {
			r.never = append(r.never, ourPath(m[1]))
		}
		r.tests = strings.Contains(never, testsToo)
		rules[ourPath(name)] = r
	}
	if len(rules) < 15 {
		t.Fatalf("docs/architecture.md: only %d package rows found", len(rules))
	}
	return rules
}

// ourPath is the import path of a package the table names.
func ourPath(name string) string {
	if name == "calsyncd" {
		return module
	}
	return module + "/" + name
}

// pkg is what one package of the module imports: its non-test files, and
// its tests (in the package and in package x_test).
type pkg struct {
	imports     []string
	testImports []string
}

// packages lists the module's packages and their imports.
func packages(t *testing.T) map[string]pkg {
	t.Helper()
	out := map[string]pkg{}
	err := filepath.WalkDir(".", func(dir string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if base := d.Name(); dir != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "node_modules") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); dir != "." && err == nil {
			// A module of its own (bench/goparsers): not this module's.
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			if _, none := err.(*build.NoGoError); none {
				return nil
			}
			return err
		}
		path := module
		if dir != "." {
			path += "/" + filepath.ToSlash(dir)
		}
		out[path] = pkg{imports: bp.Imports, testImports: append(slices.Clone(bp.TestImports), bp.XTestImports...)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hasPrefix(p string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(x string) bool {
		return p == x || strings.HasPrefix(p, x+"/") || strings.HasSuffix(x, "/") && strings.HasPrefix(p, x)
	})
}

// reach is every package of ours reachable from the imports start through
// the non-test imports of packages of ours, each with the path of ours
// that leads to it (from start, itself last).
func reach(pkgs map[string]pkg, start []string) map[string][]string {
	via := map[string][]string{}
	var walk func(p string, path []string)
	walk = func(p string, path []string) {
		if _, ours := pkgs[p]; !ours {
			return
		}
		if _, seen := via[p]; seen {
			return
		}
		path = append(slices.Clone(path), p)
		via[p] = path
		for _, imp := range pkgs[p].imports {
			walk(imp, path)
		}
	}
	for _, p := range start {
		walk(p, nil)
	}
	return via
}

// forbidden is what, of the imports start and what they reach, a rule
// forbids: "imports x", or "reaches x through a → b" when the packages of
// ours a → b lead to it.
func forbidden(pkgs map[string]pkg, start []string, never []string) []string {
	var bad []string
	for _, imp := range start {
		if hasPrefix(imp, never) {
			bad = append(bad, "imports "+imp)
		}
	}
	via := reach(pkgs, start)
	for _, q := range slices.Sorted(maps.Keys(via)) {
		if hasPrefix(q, never) {
			continue // reported where it is reached
		}
		for _, imp := range pkgs[q].imports {
			if hasPrefix(imp, never) {
				path := strings.ReplaceAll(strings.Join(via[q], " → "), module+"/", "")
				bad = append(bad, "reaches "+imp+" through "+path)
			}
		}
	}
	return bad
}

// TestImportRules enforces docs/architecture.md: every package has a row,
// imports only what its row allows, and reaches nothing its row forbids,
// neither directly nor through a package of ours; a row that says so
// holds its tests' imports to the same.
func TestImportRules(t *testing.T) {
	rules := readRules(t)
	pkgs := packages(t)
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		r, ok := rules[p]
		if !ok {
			t.Errorf("%s has no row in docs/architecture.md: say what it owns and may import", p)
			continue
		}
		for _, imp := range pkgs[p].imports {
			if _, ours := pkgs[imp]; ours && !r.any && !r.may[imp] {
				t.Errorf("%s imports %s, which its row in docs/architecture.md does not allow", p, imp)
			}
		}
		for _, bad := range forbidden(pkgs, pkgs[p].imports, r.never) {
			t.Errorf("%s %s, which its row in docs/architecture.md forbids", p, bad)
		}
		if !r.tests {
			continue
		}
		var tests []string
		for _, imp := range pkgs[p].testImports {
			if imp != p {
				tests = append(tests, imp)
			}
		}
		for _, bad := range forbidden(pkgs, tests, r.never) {
			t.Errorf("%s: a test %s, which its row in docs/architecture.md forbids %s", p, bad, testsToo)
		}
	}
	for p := range rules {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/architecture.md has a row for %s, which is no package", p)
		}
	}
}

// TestOneRecurrenceModel: the series the parser read travels on the event
// (feed.Event.Series, .Original), so neither diff nor gcalwriter reads
// recurrence lines or recurrence ids from text again.
func TestOneRecurrenceModel(t *testing.T) {
	forbidden := []string{"feed.ParseSeries(", "feed.ParseRecurrenceID(", `"RRULE:`, `"20060102`}
	allowed := map[string]string{
		// A mapping key read back from the store carries only its string.
		filepath.Join("internal", "diff", "diff.go") + " feed.ParseRecurrenceID(": "recurrenceStart",
		// The instance id Google derives is formatted from the original
		// start, not read.
		filepath.Join("internal", "gcalwriter", "instances.go") + ` "20060102`: "derivedInstanceID",
	}
	for _, dir := range []string{filepath.Join("internal", "diff"), filepath.Join("internal", "gcalwriter")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range forbidden {
				n := strings.Count(string(src), bad)
				if _, ok := allowed[f+" "+bad]; ok {
					n--
				}
				if n > 0 {
					t.Errorf("%s reads recurrence from text (%s): use feed.Event.Series and .Original", f, bad)
				}
			}
		}
	}
}

// TestNothingCitesOutsideTheRepository: what the code relies on is written
// in the repository (docs/), so no file cites notes kept beside it, and
// every docs/ page a file names exists. The architecture docs describe
// the system as it is: no issue numbers (commit messages keep the
// history).
func TestNothingCitesOutsideTheRepository(t *testing.T) {
	outside := regexp.MustCompile(`\b(DESIGN|STYLE)\.md\b|shared/(reference|seeds)\b|google-calendar-api\.md`)
	docsPage := regexp.MustCompile(`\bdocs/([A-Za-z0-9_.-]+\.md)\b`)
	issue := regexp.MustCompile(`(?i)\b(issue|#)\s*#?\d+\b|\bissue \d+`)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".service", ".1", ".sh", "":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, a document outside the repository", path, i+1, m)
			}
			for _, m := range docsPage.FindAllStringSubmatch(line, -1) {
				if _, err := os.Stat(filepath.Join("docs", m[1])); err != nil {
					t.Errorf("%s:%d names docs/%s, which does not exist", path, i+1, m[1])
				}
			}
			if path == filepath.Join("docs", "architecture.md") || strings.HasSuffix(path, "doc.go") {
				if m := issue.FindString(line); m != "" {
					t.Errorf("%s:%d: %q: the architecture docs describe the system, not its history", path, i+1, m)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
