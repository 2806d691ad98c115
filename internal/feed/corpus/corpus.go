// Package corpus finds the shared corpus of real-world iCalendar feeds for
// tests: ../shared/feeds beside the repository root, as laid out for
// developers and CI. The files are never copied into the repository.
package corpus

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Dir is the corpus directory; the test fails if it is missing.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("corpus: no go.mod above the test directory")
		}
		dir = parent
	}
	feeds := filepath.Join(dir, "..", "shared", "feeds")
	if _, err := os.Stat(feeds); err != nil {
		t.Fatalf("corpus: the feed corpus is missing: %v", err)
	}
	return feeds
}

// Files lists the corpus's .ics files as slash paths relative to Dir,
// sorted.
func Files(t testing.TB) (string, []string) {
	t.Helper()
	dir := Dir(t)
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(path) == ".ics" {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return dir, files
}
