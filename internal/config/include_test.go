package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

// tree writes files (path relative to a new directory → content) and
// returns the directory. A content of "->TARGET" makes a symbolic link.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// subs is a subscriptions: list item per id, four lines each (the first
// item's id on line 2 of a file that begins with subscriptions:).
func subs(ids ...string) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "  - id: %s\n    url: https://feeds.example.com/%s.ics\n    calendar: %s@example.com\n    title: \"[%s] {summary}\"\n", id, id, id, id)
	}
	return b.String()
}

// TestIncludeAppendsInOrder: the main file's subscriptions first, then
// each entry of include: in order: a file, a pattern's matches and a
// directory's *.yaml and *.yml files in lexical order (names beginning
// with a dot, other extensions and subdirectories left out).
func TestIncludeAppendsInOrder(t *testing.T) {
	dir := tree(t, map[string]string{
		"config.yaml": "state_dir: state\ninclude:\n  - teams.yaml\n  - more/*.yaml\n  - subscriptions.d\n  - /ABS/abs.yml\n" +
			"subscriptions:\n" + subs("main-a", "main-b"),
		"teams.yaml":                     "subscriptions:\n" + subs("team-a"),
		"more/b.yaml":                    "subscriptions:\n" + subs("more-b1", "more-b2"),
		"more/a.yaml":                    "# the team's feeds\nsubscriptions:\n" + subs("more-a"),
		"more/.hidden.yaml":              "subscriptions:\n" + subs("hidden"),
		"more/c.yml":                     "subscriptions:\n" + subs("not-matched"),
		"subscriptions.d/20-later.yml":   "subscriptions:\n" + subs("d-later"),
		"subscriptions.d/10-first.yaml":  "subscriptions:\n" + subs("d-first"),
		"subscriptions.d/empty.yaml":     "subscriptions: []\n",
		"subscriptions.d/README.txt":     "not a configuration",
		"subscriptions.d/.swap.yaml":     "not: read",
		"subscriptions.d/nested/x.yaml":  "subscriptions:\n" + subs("nested"),
		"subscriptions.d/dir.yaml/y.yml": "subscriptions:\n" + subs("dir-named-yaml"),
		"elsewhere/abs.yml":              "subscriptions:\n" + subs("absolute"),
	})
	main := filepath.Join(dir, "config.yaml")
	body, _ := os.ReadFile(main)
	os.WriteFile(main, []byte(strings.Replace(string(body), "/ABS", filepath.Join(dir, "elsewhere"), 1)), 0o600)

	cfg, err := config.Load(main)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range cfg.Subscriptions {
		ids = append(ids, s.ID)
	}
	want := []string{"main-a", "main-b", "team-a", "more-a", "more-b1", "more-b2", "d-first", "d-later", "absolute"}
	if !slices.Equal(ids, want) {
		t.Errorf("subscriptions %v\nwant %v", ids, want)
	}
	wantFiles := []string{main, filepath.Join(dir, "teams.yaml"), filepath.Join(dir, "more/a.yaml"), filepath.Join(dir, "more/b.yaml"),
		filepath.Join(dir, "subscriptions.d/10-first.yaml"), filepath.Join(dir, "subscriptions.d/20-later.yml"),
		filepath.Join(dir, "subscriptions.d/empty.yaml"), filepath.Join(dir, "elsewhere/abs.yml")}
	if !slices.Equal(cfg.Files, wantFiles) {
		t.Errorf("Files %v\nwant %v", cfg.Files, wantFiles)
	}
	for i, w := range []struct{ file, key string }{
		{main, "subscriptions[0]"}, {main, "subscriptions[1]"}, {"teams.yaml", "subscriptions[0]"},
		{"more/a.yaml", "subscriptions[0]"}, {"more/b.yaml", "subscriptions[0]"}, {"more/b.yaml", "subscriptions[1]"},
		{"subscriptions.d/10-first.yaml", "subscriptions[0]"}, {"subscriptions.d/20-later.yml", "subscriptions[0]"},
		{"elsewhere/abs.yml", "subscriptions[0]"},
	} {
		if !filepath.IsAbs(w.file) {
			w.file = filepath.Join(dir, w.file)
		}
		if file, key := cfg.SubscriptionSource(i); file != w.file || key != w.key {
			t.Errorf("SubscriptionSource(%d) = %s %s, want %s %s", i, file, key, w.file, w.key)
		}
	}
	// Included subscriptions are subscriptions like any other: the
	// defaults and the rules reach them.
	if s, ok := cfg.Subscription("more-b2"); !ok || *cfg.EffectivePresentation(s).Title != "[more-b2] {summary}" {
		t.Errorf("more-b2: %+v", s)
	}
	if cfg.StateDir != filepath.Join(dir, "state") {
		t.Errorf("state_dir %s", cfg.StateDir)
	}
}

// TestIncludedFileErrorsNameThatFile: every error in an included file
// names that file, its line and the key as that file writes it, after
// the main file's errors; the rules see the one list.
func TestIncludedFileErrorsNameThatFile(t *testing.T) {
	tests := []struct {
		name     string
		included string
		env      map[string]string
		want     []string // each error, as printed; INC is the included file, MAIN the main one
	}{
		{
			name:     "a rule",
			included: "subscriptions:\n" + subs("ok") + "  - id: bad\n    url: ftp://feeds.example.com/bad.ics\n    calendar: bad@example.com\n",
			want:     []string{`INC:7: subscriptions[1].url: unsupported URL scheme "ftp"`},
		},
		{
			name:     "an unknown key, and rules that still hold",
			included: "subscriptions:\n  - id: Bad ID\n    url: https://feeds.example.com/x.ics\n    calendar: x@example.com\n    colour: banana\n",
			want: []string{
				`INC:2: subscriptions[0].id: must be lowercase letters, digits, - or _ (at most 63), got "Bad ID"`,
				`INC:5: subscriptions[0].colour: unknown key (did you mean "color"?)`,
			},
		},
		{
			name:     "an account the main file does not name",
			included: "subscriptions:\n  - id: x\n    url: https://feeds.example.com/x.ics\n    calendar: x@example.com\n    account: work\n",
			want:     []string{`INC:5: subscriptions[0].account: unknown account "work" (known: default, other)`},
		},
		{
			name:     "a relative file URL is meant from the included file's directory",
			included: "subscriptions:\n  - id: x\n    url: file://feeds/x.ics\n    calendar: x@example.com\n",
			want:     []string{`INC:3: subscriptions[0].url: "file://feeds/x.ics" does not name an absolute path: a file URL is file:// and then the absolute path (three slashes in all); did you mean file://DIR/teams/feeds/x.ics?`},
		},
		{
			name:     "not YAML",
			included: "subscriptions:\n  - id: x\n\turl: y\n",
			want:     []string{"INC:2: not valid YAML: found a tab character that violates indentation (line 3 is indented with a tab: YAML needs spaces)"},
		},
		{
			name:     "another top-level key",
			included: "accounts:\n  - name: more\nsubscriptions:\n" + subs("x") + "subscription: []\n",
			want: []string{
				"INC:1: accounts: an included file holds only subscriptions: (included by MAIN:4); accounts belongs in the main file",
				`INC:8: subscription: unknown key (did you mean "subscriptions"?): an included file holds only subscriptions: (included by MAIN:4)`,
			},
		},
		{
			name:     "an include in an included file",
			included: "include: [other.yaml]\nsubscriptions:\n" + subs("x"),
			want:     []string{"INC:1: include: an included file cannot include others (included by MAIN:4): name every file in the main file's include:"},
		},
		{
			name:     "subscriptions twice",
			included: "subscriptions:\n" + subs("x") + "subscriptions:\n" + subs("y"),
			want:     []string{"INC:6: subscriptions: duplicate key"},
		},
		{
			name:     "not a list",
			included: "subscriptions: {id: x}\n",
			want:     []string{"INC:1: subscriptions: expected a list"},
		},
		{
			name:     "a list of subscriptions without the key",
			included: subs("x"),
			want:     []string{"INC:1: expected a mapping holding subscriptions: (included by MAIN:4)"},
		},
		{
			name:     "empty",
			included: "# nothing yet\n",
			want:     []string{"INC: the file is empty: an included file holds a subscriptions: list (included by MAIN:4; an empty list is subscriptions: [])"},
		},
		{
			name:     "an unset variable",
			included: "subscriptions:\n  - id: x\n    url: https://feeds.example.com/${TOKEN}/x.ics\n    calendar: x@example.com\n",
			want:     []string{"INC:3: subscriptions[0].url: environment variable TOKEN is not set"},
		},
		{
			name:     "errors in both files, the main file's first",
			included: "subscriptions:\n  - id: x\n    url: https://feeds.example.com/x.ics\n",
			env:      map[string]string{"MAIN_BROKEN": "1"},
			want: []string{
				"MAIN:10: schedule: invalid cron spec",
				"INC:2: subscriptions[0].calendar: required",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			main := "state_dir: state\naccounts:\n  - name: other\ninclude: [teams/team.yaml]\nsubscriptions:\n" + subs("main")
			if tt.env["MAIN_BROKEN"] != "" {
				main += "schedule: nonsense\n"
			}
			dir := tree(t, map[string]string{"config.yaml": main, "teams/team.yaml": tt.included})
			mainPath, inc := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "teams/team.yaml")
			_, err := config.Parse(mainPath, []byte(main), func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			var errs config.Errors
			if !errors.As(err, &errs) || !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("errors:\n%s\nwant %d", strings.Join(got, "\n"), len(tt.want))
			}
			for i, w := range tt.want {
				w = strings.NewReplacer("INC", inc, "MAIN", mainPath, "DIR", dir).Replace(w)
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("error %d:\n%s\nwant\n%s", i, got[i], w)
				}
			}
		})
	}
}

// TestIncludeErrorsNameTheIncludingLine: what is wrong with an entry of
// include: (no such file, a pattern or directory that names none, the
// main file, a file twice, a file over the cap) is an error at that
// entry's line in the main file.
func TestIncludeErrorsNameTheIncludingLine(t *testing.T) {
	big := "subscriptions: []\n" + strings.Repeat("# padding padding padding\n", config.MaxFileSize/20)
	tests := []struct {
		name    string
		include string // the entries, one a line; the first is on line 3
		files   map[string]string
		line    int
		key     string
		msg     string // INC is the directory's path
	}{
		{"a missing file", "- teams.yaml\n- missing.yaml", nil, 4, "include[1]", "INC/missing.yaml does not exist"},
		{"a missing directory", "- gone.d/", nil, 3, "include[0]", "INC/gone.d does not exist"},
		{"a pattern that matches nothing", "- teams.yaml\n- subscriptions.d/*.yaml", nil, 4, "include[1]",
			`"subscriptions.d/*.yaml" matches no file (INC/subscriptions.d/*.yaml): an include that names no file is an error`},
		{"a pattern that matches only dot files", "- hidden/*.yaml", map[string]string{"hidden/.x.yaml": "subscriptions: []\n"}, 3, "include[0]", "matches no file"},
		{"a pattern that matches a directory", "- '*'", nil, 3, "include[0]", `"*" matches the directory INC/empty.d: a pattern names files`},
		{"a bad pattern", "- 'teams[.yaml'", nil, 3, "include[0]", `"teams[.yaml" is not a valid pattern`},
		{"an empty directory", "- empty.d", nil, 3, "include[0]", "the directory INC/empty.d holds no *.yaml or *.yml file"},
		{"an empty entry", "- teams.yaml\n- ''", nil, 4, "include[1]", "must name a file, a directory or a pattern"},
		{"the main file", "- config.yaml", nil, 3, "include[0]", "INC/config.yaml is the main configuration file itself"},
		{"the main file through a link", "- link.yaml", map[string]string{"link.yaml": "->config.yaml"}, 3, "include[0]", "INC/link.yaml is the main configuration file itself"},
		{"a file twice", "- teams.yaml\n- '*.yaml'", nil, 4, "include[1]", "INC/teams.yaml is already included by include[0] (line 3): each file is read once"},
		{"a file twice through a link", "- teams.yaml\n- again.yaml", map[string]string{"again.yaml": "->teams.yaml"}, 4, "include[1]",
			"INC/again.yaml is already included by include[0] (line 3)"},
		{"a file over the cap", "- big.yaml", map[string]string{"big.yaml": big}, 3, "include[0]", "INC/big.yaml is larger than 1MiB; is it the right file?"},
		{"not a regular file", "- fifo.yaml", map[string]string{"fifo.yaml": "->/dev/null"}, 3, "include[0]", "INC/fifo.yaml is not a regular file"},
		{"not a list", "", map[string]string{}, 2, "include", "expected a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"teams.yaml": "subscriptions:\n" + subs("team"), "empty.d/README": "no yaml here"}
			for k, v := range tt.files {
				files[k] = v
			}
			main := "state_dir: state\ninclude:\n" + indent(tt.include)
			if tt.include == "" {
				main = "state_dir: state\ninclude: teams.yaml\n"
			}
			main += "subscriptions:\n" + subs("main")
			files["config.yaml"] = main
			dir := tree(t, files)
			_, err := config.Load(filepath.Join(dir, "config.yaml"))
			var errs config.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			if errors.Is(err, os.ErrNotExist) {
				t.Errorf("the error reads as a missing main file (noConfig would say so): %v", err)
			}
			msg := strings.ReplaceAll(tt.msg, "INC", dir)
			for _, e := range errs {
				if e.File == filepath.Join(dir, "config.yaml") && e.Line == tt.line && e.Key == tt.key && strings.Contains(e.Msg, msg) {
					return
				}
			}
			t.Errorf("no error at config.yaml:%d %s containing %q; got:\n%v", tt.line, tt.key, msg, err)
		})
	}
}

func indent(lines string) string {
	var b strings.Builder
	for _, l := range strings.Split(lines, "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// TestDuplicateIDsAcrossFiles: a subscription id is one across every
// file; the second is refused naming the first's place, file and line.
func TestDuplicateIDsAcrossFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string // MAIN, A and B are the files' paths
	}{
		{
			name: "main and included",
			files: map[string]string{
				"config.yaml": "include: [a.yaml]\nsubscriptions:\n" + subs("one", "team"),
				"a.yaml":      "subscriptions:\n" + subs("two", "team"),
			},
			want: `A:6: subscriptions[1].id: duplicate id "team" (also subscriptions[1].id, MAIN:7)`,
		},
		{
			name: "two included",
			files: map[string]string{
				"config.yaml": "include: [a.yaml, b.yaml]\nsubscriptions:\n" + subs("one"),
				"a.yaml":      "subscriptions:\n" + subs("team"),
				"b.yaml":      "subscriptions:\n" + subs("two", "three", "team"),
			},
			want: `B:10: subscriptions[2].id: duplicate id "team" (also subscriptions[0].id, A:2)`,
		},
		{
			name: "within one included file",
			files: map[string]string{
				"config.yaml": "include: [a.yaml]\n",
				"a.yaml":      "subscriptions:\n" + subs("team", "team"),
			},
			want: `A:6: subscriptions[1].id: duplicate id "team" (also subscriptions[0].id, line 2)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, tt.files)
			_, err := config.Load(filepath.Join(dir, "config.yaml"))
			want := strings.NewReplacer("MAIN", filepath.Join(dir, "config.yaml"), "A:", filepath.Join(dir, "a.yaml")+":", "B:", filepath.Join(dir, "b.yaml")+":").Replace(tt.want)
			if err == nil || err.Error() != want {
				t.Errorf("err =\n%v\nwant\n%s", err, want)
			}
		})
	}
}

// The same feed into the same calendar from two files is a warning
// naming both places.
func TestSameFeedTwiceAcrossFilesWarns(t *testing.T) {
	dir := tree(t, map[string]string{
		"config.yaml": "google:\n  endpoint: http://127.0.0.1:1/\ninclude: [a.yaml]\nsubscriptions:\n" + subs("team"),
		"a.yaml":      "subscriptions:\n  - id: again\n    url: https://feeds.example.com/team.ics\n    calendar: team@example.com\n",
	})
	cfg, err := config.Load(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 {
		t.Fatalf("warnings %v, want one", cfg.Warnings)
	}
	w := cfg.Warnings[0]
	if w.File != filepath.Join(dir, "a.yaml") || w.Line != 2 || w.Key != "subscriptions[0]" ||
		!strings.Contains(w.Msg, "(subscriptions[0], "+filepath.Join(dir, "config.yaml")+":5)") {
		t.Errorf("warning %s", w)
	}
}

// TestEnvironmentInIncludedFiles: ${VAR} is expanded in included files
// (and in include: itself) as in the main file; with the allowance an
// unset one is a warning naming the included file, and the value keeps
// the reference.
func TestEnvironmentInIncludedFiles(t *testing.T) {
	dir := tree(t, map[string]string{
		"config.yaml": "include: ['${SUBS_DIR}/a.yaml']\nsubscriptions:\n" + subs("main"),
		"teams/a.yaml": "subscriptions:\n  - id: team\n    url: https://feeds.example.com/private-${TOKEN}/a.ics\n    calendar: team@example.com\n" +
			"    headers: {Authorization: 'Bearer ${API_TOKEN}'}\n",
	})
	main, inc := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "teams/a.yaml")
	data, _ := os.ReadFile(main)
	tests := []struct {
		name       string
		env        map[string]string
		allowUnset bool
		wantURL    string
		wantHeader string
		wantUnset  []string
		wantErr    string
	}{
		{name: "every variable set", env: map[string]string{"SUBS_DIR": "teams", "TOKEN": "tok-1", "API_TOKEN": "api-2"},
			wantURL: "https://feeds.example.com/private-tok-1/a.ics", wantHeader: "Bearer api-2"},
		{name: "a token unset", env: map[string]string{"SUBS_DIR": "teams", "TOKEN": "tok-1"},
			wantErr: inc + ":5: subscriptions[0].headers.Authorization: environment variable API_TOKEN is not set"},
		{name: "a token unset, allowed", env: map[string]string{"SUBS_DIR": "teams"}, allowUnset: true,
			wantURL: "https://feeds.example.com/private-${TOKEN}/a.ics", wantHeader: "Bearer ${API_TOKEN}",
			wantUnset: []string{inc + ":3: subscriptions[0].url: environment variable TOKEN is not set",
				inc + ":5: subscriptions[0].headers.Authorization: environment variable API_TOKEN is not set"}},
		{name: "the include's own variable unset", env: map[string]string{},
			wantErr: main + ":1: include[0]: environment variable SUBS_DIR is not set"},
		{name: "the include's own variable unset, allowed: noted, not read", env: map[string]string{}, allowUnset: true,
			wantUnset: []string{main + ":1: include[0]: environment variable SUBS_DIR is not set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			var (
				cfg   *config.Config
				unset config.Errors
				err   error
			)
			if tt.allowUnset {
				cfg, unset, err = config.ParseAllowUnset(main, data, lookup)
			} else {
				cfg, err = config.Parse(main, data, lookup)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err =\n%v\nwant\n%s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range unset {
				got = append(got, u.Error())
			}
			if !slices.Equal(got, tt.wantUnset) {
				t.Errorf("unset:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.wantUnset, "\n"))
			}
			s, ok := cfg.Subscription("team")
			if tt.wantURL == "" {
				if ok {
					t.Errorf("the include was read with its directory unknown")
				}
				return
			}
			if !ok || s.URL != tt.wantURL || s.Headers["Authorization"] != tt.wantHeader {
				t.Errorf("team = %+v", s)
			}
		})
	}
}

// TestIncludeTotalCaps: past MaxIncludedFiles files or the total cap of
// bytes in all, the configuration is refused at the entry that went past;
// just under both, it loads. The total cap is MaxTotalSize (64 MiB) as
// the loader applies it; the test lowers it to 4 MiB, the per-file cap
// staying MaxFileSize, so that reaching it is not 64 MiB of YAML to parse.
func TestIncludeTotalCaps(t *testing.T) {
	if config.TotalSize() != config.MaxTotalSize || config.MaxTotalSize != 64<<20 {
		t.Fatalf("the loader caps the total at %d bytes, MaxTotalSize is %d: the README says 64 MiB", config.TotalSize(), config.MaxTotalSize)
	}
	const total = 4 << 20
	t.Cleanup(config.LowerTotalSize(total))
	// MaxIncludedFiles files in one directory: with one more file named
	// before it, the directory passes the cap.
	many := t.TempDir()
	for i := range config.MaxIncludedFiles {
		os.WriteFile(filepath.Join(many, fmt.Sprintf("%05d.yaml", i)), []byte("subscriptions: []\n"), 0o600)
	}
	// Files just under the per-file cap: the total cap is reached with
	// the 5th.
	large := t.TempDir()
	pad := "subscriptions: []\n" + strings.Repeat("#", config.MaxFileSize-100) + "\n"
	for i := range total/config.MaxFileSize + 1 {
		os.WriteFile(filepath.Join(large, fmt.Sprintf("%03d.yaml", i)), []byte(pad), 0o600)
	}
	tests := []struct {
		name, include string
		want          string // "": loads
	}{
		{"as many files as allowed", "[" + many + "]", ""},
		{"one file more", "[a.yaml, " + many + "]", fmt.Sprintf(":1: include[1]: include: names more than %d files in all", config.MaxIncludedFiles)},
		{"as many bytes as allowed", "['" + large + "/00[0-3].yaml']", ""},
		{"more bytes", "[a.yaml, " + large + "]", ":1: include[1]: with " + large + "/004.yaml the configuration's files come to more than 4MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{
				"config.yaml": "include: " + tt.include + "\n",
				"a.yaml":      "subscriptions:\n" + subs("team"),
			})
			main := filepath.Join(dir, "config.yaml")
			cfg, err := config.Load(main)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if n := len(cfg.Files); n != config.MaxIncludedFiles+1 && n != total/config.MaxFileSize+1 {
					t.Errorf("%d files read", n)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), main+tt.want) {
				t.Errorf("err = %v\nwant %s", err, main+tt.want)
			}
		})
	}
}
