package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for creating test schemas

	"github.com/calsyncd/calsyncd/internal/store"
)

// postgresDSNVar names the environment variable that points the conformance
// suite at a PostgreSQL server; .ci/run sets it.
const postgresDSNVar = "CALSYNCD_TEST_POSTGRES_DSN"

// testNow is the fixed clock of stores opened by testDB.open.
var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// backend is a database the conformance suite runs against: fresh returns
// the driver and DSN of a new, empty database that the test's cleanup
// removes.
type backend struct {
	name  string
	fresh func(t *testing.T) testDB
}

var backends = []backend{
	{"sqlite", freshSQLite},
	{"postgres", freshPostgres},
}

// forEachBackend runs test once per backend, each on its own empty database.
func forEachBackend(t *testing.T, test func(t *testing.T, db testDB)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			test(t, b.fresh(t))
		})
	}
}

// testDB is one empty database; every Store opened on it shares its rows.
type testDB struct{ driver, dsn string }

// open opens a Store on the database with the fixed clock testNow; the test
// closes it.
func (d testDB) open(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), d.driver, d.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Now = func() time.Time { return testNow }
	return s
}

func freshSQLite(t *testing.T) testDB {
	return testDB{"sqlite", filepath.Join(t.TempDir(), "state", "calsyncd.db")}
}

var postgresAdmin = struct {
	once sync.Once
	db   *sql.DB
	err  error
}{}

// freshPostgres creates a schema of its own on the server named by
// CALSYNCD_TEST_POSTGRES_DSN and returns a DSN whose search_path selects it,
// so tests and packages running at once never see each other's tables.
func freshPostgres(t *testing.T) testDB {
	t.Helper()
	base := os.Getenv(postgresDSNVar)
	if base == "" {
		t.Skip("no PostgreSQL server: set " + postgresDSNVar +
			"=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run the store suite against one (.ci/run does)")
	}
	postgresAdmin.once.Do(func() {
		postgresAdmin.db, postgresAdmin.err = sql.Open("pgx", base)
	})
	if postgresAdmin.err != nil {
		t.Fatalf("%s is not a valid DSN", postgresDSNVar)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "calsyncd_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := postgresAdmin.db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create test schema on the server named by %s: %v", postgresDSNVar, err)
	}
	t.Cleanup(func() {
		if _, err := postgresAdmin.db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	return testDB{"postgres", withSearchPath(t, base, schema)}
}

// withSearchPath adds search_path to a URL or key=value DSN.
func withSearchPath(t *testing.T, dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s is not a valid URL", postgresDSNVar)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// searchPath is the schema a test DSN selects.
func searchPath(t *testing.T, dsn string) string {
	t.Helper()
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Query().Get("search_path")
	}
	_, schema, _ := strings.Cut(dsn, " search_path=")
	return schema
}

// withUser makes a test DSN log in as role (the server trusts local logins).
func withUser(t *testing.T, dsn, role string) string {
	t.Helper()
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		u.User = url.User(role)
		return u.String()
	}
	return dsn + " user=" + role
}
