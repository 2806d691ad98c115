package store

import (
	"errors"
	"io/fs"
	"testing"
)

func TestRedactMasksTheSecretAndKeepsTheChain(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "/run/hunter2", Err: fs.ErrNotExist}
	err := redact(errors.Join(errors.New("store: open postgres database"), cause), "hunter2")
	if got, want := err.Error(), "store: open postgres database\nopen /run/xxxxx: file does not exist"; got != want {
		t.Fatalf("redacted = %q, want %q", got, want)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("redaction broke errors.As/Is")
	}
	for _, c := range []struct {
		name   string
		err    error
		secret string
	}{{"no secret", cause, ""}, {"secret absent", cause, "swordfish"}, {"nil error", nil, "hunter2"}} {
		if got := redact(c.err, c.secret); got != c.err {
			t.Errorf("%s: redact changed the error to %v", c.name, got)
		}
	}
}
