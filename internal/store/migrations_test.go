package store_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestMigrationVersionsAreUnique: a migration is applied once per version
// number, so two files sharing a number (two branches each adding "the
// next" migration) would silently skip one of them. Each driver numbers
// its files 1, 2, 3, … once each, and both drivers have the same
// versions.
func TestMigrationVersionsAreUnique(t *testing.T) {
	versions := map[string][]int{}
	for _, driver := range []string{"sqlite", "postgres"} {
		entries, err := os.ReadDir(filepath.Join("migrations", driver))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]string{}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".sql") {
				continue
			}
			v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
			if err != nil {
				t.Fatalf("%s/%s: the name must start with its version", driver, e.Name())
			}
			if other, dup := seen[v]; dup {
				t.Errorf("%s: %s and %s share version %d: renumber one", driver, other, e.Name(), v)
			}
			seen[v] = e.Name()
			versions[driver] = append(versions[driver], v)
		}
		for i, v := range versions[driver] {
			if v != i+1 {
				t.Errorf("%s: versions %v are not 1..%d", driver, versions[driver], len(versions[driver]))
				break
			}
		}
	}
	if !reflect.DeepEqual(versions["sqlite"], versions["postgres"]) {
		t.Errorf("the drivers' migrations differ: sqlite %v, postgres %v", versions["sqlite"], versions["postgres"])
	}
}
