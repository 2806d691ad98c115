package calsyncd_test

import (
	"errors"
	"fmt"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
)

type refuser struct {
	refused bool
	err     error
}

func (e refuser) Error() string            { return fmt.Sprintf("refuser(%v)", e.refused) }
func (e refuser) Unwrap() error            { return e.err }
func (e refuser) CredentialsRefused() bool { return e.refused }

func TestCredentialsRefused(t *testing.T) {
	tests := map[string]struct {
		err  error
		want bool
	}{
		"nil":                         {nil, false},
		"plain":                       {errors.New("disk full"), false},
		"refused":                     {refuser{refused: true}, true},
		"wrapped refused":             {fmt.Errorf("run: %w", refuser{refused: true}), true},
		"not refused":                 {refuser{}, false},
		"a refusal below a non-one":   {refuser{err: fmt.Errorf("token: %w", refuser{refused: true})}, true},
		"joined, the second refuses":  {errors.Join(refuser{}, refuser{refused: true}), true},
		"joined, neither refuses":     {errors.Join(refuser{}, errors.New("x")), false},
		"a join under a non-refusal":  {refuser{err: errors.Join(errors.New("x"), refuser{refused: true})}, true},
		"classed but not credentials": {calsyncd.NewError(calsyncd.ClassAuth, "calendar not shared"), false},
	}
	for name, tt := range tests {
		if got := calsyncd.CredentialsRefused(tt.err); got != tt.want {
			t.Errorf("%s: CredentialsRefused = %v, want %v", name, got, tt.want)
		}
	}
}

func TestFindingString(t *testing.T) {
	for f, want := range map[calsyncd.Finding]string{calsyncd.Unknown: "unknown", calsyncd.Holds: "holds", calsyncd.Cleared: "cleared"} {
		if f.String() != want {
			t.Errorf("%d: %q, want %q", f, f.String(), want)
		}
	}
}
