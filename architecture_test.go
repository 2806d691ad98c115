package calsyncd_test

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/calsyncd/calsyncd"

// rule is one row of docs/architecture.md's package table.
type rule struct {
	any      bool            // may import anything
	may      map[string]bool // packages of ours it may import
	never    []string        // import path prefixes it must not import
	indirect bool            // never Google, not even through a package of ours
}

var google = []string{"google.golang.org/", "golang.org/x/oauth2", "cloud.google.com/"}
var theStore = []string{module + "/internal/store", "github.com/mattn/go-sqlite3", "github.com/jackc/pgx"}

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
		path := module + "/" + name
		if name == "calsyncd" {
			path = module
		}
		r := rule{may: map[string]bool{}}
		if strings.TrimSpace(cells[3]) == "anything" {
			r.any = true
		}
		for _, m := range code.FindAllStringSubmatch(cells[3], -1) {
			p := module + "/" + m[1]
			if m[1] == "calsyncd" {
				p = module
			}
			r.may[p] = true
		}
		never := cells[4]
		if strings.Contains(never, "Google") {
			r.never = append(r.never, google...)
			r.indirect = strings.Contains(never, "Google (even indirectly)")
		}
		if strings.Contains(never, "the store") {
			r.never = append(r.never, theStore...)
		}
		for _, m := range code.FindAllStringSubmatch(never, -1) {
			r.never = append(r.never, module+"/"+m[1])
		}
		rules[path] = r
	}
	if len(rules) < 15 {
		t.Fatalf("docs/architecture.md: only %d package rows found", len(rules))
	}
	return rules
}

// packages lists the module's packages (non-test files) and their imports.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
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
		pkg, err := build.ImportDir(dir, 0)
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
		out[path] = pkg.Imports
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

// TestImportRules enforces docs/architecture.md: every package has a row,
// imports only what its row allows, never what it forbids, and a package
// that must not know Google does not reach it through a package of ours.
func TestImportRules(t *testing.T) {
	rules := readRules(t)
	pkgs := packages(t)
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	// deps is every package of ours p reaches, p included.
	var deps func(p string, seen map[string]bool)
	deps = func(p string, seen map[string]bool) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, imp := range pkgs[p] {
			if _, ours := pkgs[imp]; ours {
				deps(imp, seen)
			}
		}
	}
	for _, p := range names {
		r, ok := rules[p]
		if !ok {
			t.Errorf("%s has no row in docs/architecture.md: say what it owns and may import", p)
			continue
		}
		for _, imp := range pkgs[p] {
			_, ours := pkgs[imp]
			if ours && !r.any && !r.may[imp] {
				t.Errorf("%s imports %s, which its row in docs/architecture.md does not allow", p, imp)
			}
			if hasPrefix(imp, r.never) {
				t.Errorf("%s imports %s, which it must never import (docs/architecture.md)", p, imp)
			}
		}
		if !r.indirect {
			continue
		}
		seen := map[string]bool{}
		deps(p, seen)
		for q := range seen {
			for _, imp := range pkgs[q] {
				if hasPrefix(imp, google) {
					t.Errorf("%s depends on Google through %s (%s), and must not even indirectly", p, q, imp)
				}
			}
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
