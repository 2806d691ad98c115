// Package corpus finds the shared corpus of real-world iCalendar feeds for
// tests: ../shared/feeds beside the repository root, as laid out for
// developers and CI. The files are never copied into the repository.
package corpus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// RequireEnv, set to 1, makes a missing corpus fail the tests that need it
// instead of skipping them (CI sets it).
const RequireEnv = "CALSYNCD_REQUIRE_CORPUS"

// Dir is the corpus directory. When it is missing the test is skipped with
// a one-line message, or fails when CALSYNCD_REQUIRE_CORPUS=1.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := find()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("corpus: %v", err)
		}
		t.Skipf("corpus: %v (set %s=1 to fail instead)", err, RequireEnv)
	}
	return dir
}

// Available returns the corpus directory, or false when it is missing: for
// a test that only seeds from it.
func Available() (string, bool) {
	dir, err := find()
	return dir, err == nil
}

func find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test directory")
		}
		dir = parent
	}
	feeds := filepath.Join(dir, "..", "shared", "feeds")
	if _, err := os.Stat(feeds); err != nil {
		return "", fmt.Errorf("the shared feed corpus is missing: %w", err)
	}
	return feeds, nil
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
