package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/store"
)

// A postgres DSN may hold a password; no error from Open may repeat it.
// These need no server: each DSN is malformed or points at a closed port.
func TestOpenPostgresNeverShowsTheDSN(t *testing.T) {
	const secret = "s3cret-Pw_42"
	for name, c := range map[string]struct {
		dsn     string
		invalid bool // want ErrInvalidDSN
	}{
		"url with a bad port":     {"postgres://calsyncd:" + secret + "@db.example:notaport/calsyncd", true},
		"url with a bad escape":   {"postgres://calsyncd:" + secret + "%zz@db.example/calsyncd", true},
		"url with a bad sslmode":  {"postgres://calsyncd:" + secret + "@db.example/calsyncd?sslmode=sometimes", true},
		"key=value, bad sslmode":  {"host=db.example user=calsyncd password=" + secret + " sslmode=sometimes", true},
		"key=value, quoted":       {"host=db.example password='" + secret + " x' sslmode=sometimes", true},
		"key=value, unterminated": {"host=db.example password='" + secret, true},
		"url, closed port":        {"postgres://calsyncd:" + secret + "@127.0.0.1:1/calsyncd?sslmode=disable&connect_timeout=5", false},
		"key=value, closed port":  {"host=127.0.0.1 port=1 user=calsyncd password=" + secret + " dbname=calsyncd sslmode=disable", false},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := store.Open(ctx, "postgres", c.dsn)
			if err == nil {
				s.Close()
				t.Fatal("open succeeded")
			}
			if c.invalid != errors.Is(err, store.ErrInvalidDSN) {
				t.Errorf("errors.Is(err, ErrInvalidDSN) = %v, want %v; err: %v", !c.invalid, c.invalid, err)
			}
			// The user name is not secret, but someone may have put the
			// password there; the host may be shown.
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error shows the secret: %v", err)
			}
		})
	}
}

// Operators may migrate with an owner role and run replicas with a role
// that can only read and write rows; such a replica must start, and must
// fail clearly if a migration is pending.
func TestPostgresRoleWithoutCreateCanStart(t *testing.T) {
	db := freshPostgres(t)
	owner := db.open(t)
	if _, err := owner.EnsureSubscription(context.Background(), "team", "cal", "default"); err != nil {
		t.Fatal(err)
	}
	schema := searchPath(t, db.dsn)
	role := schema + "_rw"
	admin := postgresAdmin.db
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + role,
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := admin.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	replica := testDB{"postgres", withUser(t, db.dsn, role)}.open(t)
	if s, err := replica.Subscription(context.Background(), "team"); err != nil || s.Calendar != "cal" {
		t.Fatalf("read as %s: %+v, %v", role, s, err)
	}
	if _, _, err := replica.ClaimLease(context.Background(), "default", "r1", ttl); err != nil {
		t.Fatalf("claim as %s: %v", role, err)
	}
	// The role is really limited: it could not have created the schema.
	fresh := freshPostgres(t)
	if _, err := admin.Exec("GRANT USAGE ON SCHEMA " + searchPath(t, fresh.dsn) + " TO " + role); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(context.Background(), "postgres", withUser(t, fresh.dsn, role)); err == nil ||
		!strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("migrating without CREATE: %v", err)
	}
}
