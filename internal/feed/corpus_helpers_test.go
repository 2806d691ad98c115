package feed_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// corpusDir finds ../shared/feeds beside the repository root (the
// directory holding go.mod), as laid out for developers and CI.
func corpusDir(t testing.TB) string {
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
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	feeds := filepath.Join(dir, "..", "shared", "feeds")
	if _, err := os.Stat(feeds); err != nil {
		t.Fatalf("the feed corpus is missing: %v", err)
	}
	return feeds
}

// corpusFiles lists the corpus as paths relative to its directory.
func corpusFiles(t testing.TB) (string, []string) {
	dir := corpusDir(t)
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
