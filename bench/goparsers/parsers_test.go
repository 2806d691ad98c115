package goparsers

import (
	"testing"

	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

// TestParsersAgree holds the comparison to the same work: on every shape
// each parser reads the feed without error or warning and finds as many
// events as the feed has VEVENTs.
func TestParsersAgree(t *testing.T) {
	for _, s := range feedgen.Shapes {
		data := s.Generate(200)
		want := countEvents(data)
		if want != 200 {
			t.Fatalf("%s: %d VEVENTs generated, want 200", s.Name, want)
		}
		for _, p := range Parsers {
			got, err := p.Parse(data)
			if err != nil {
				t.Errorf("%s/%s: %v", s.Name, p.Name, err)
			} else if got != want {
				t.Errorf("%s/%s: %d events, want %d", s.Name, p.Name, got, want)
			}
		}
	}
}

func TestFind(t *testing.T) {
	for _, p := range Parsers {
		if got, err := Find(p.Name); err != nil || got.Name != p.Name {
			t.Errorf("Find(%q) = %q, %v", p.Name, got.Name, err)
		}
	}
	if _, err := Find("nope"); err == nil {
		t.Error("Find(nope): no error")
	}
}
