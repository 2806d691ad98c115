package fetch

import (
	"net/url"
	"testing"
)

func TestSameHost(t *testing.T) {
	tests := []struct {
		from, to string
		same     bool
	}{
		{"https://feeds.example.com/a", "https://feeds.example.com/b?x=1", true},
		{"https://feeds.example.com/a", "https://FEEDS.example.com/b", true},
		{"https://feeds.example.com/a", "https://feeds.example.com:443/b", true},
		{"http://feeds.example.com/a", "https://feeds.example.com/b", true}, // the upgrade
		{"http://feeds.example.com:8080/a", "https://feeds.example.com/b", false},
		{"https://feeds.example.com/a", "https://feeds.example.com:8443/b", false},
		{"https://feeds.example.com/a", "https://cdn.example.com/b", false},
		{"https://example.com/a", "https://sub.example.com/b", false},
		{"https://feeds.example.com/a", "https://feeds.example.com./b", false},
		{"https://127.0.0.1:8080/a", "https://localhost:8080/b", false},
		{"https://[::1]:8080/a", "https://[::1]:8080/b", true},
	}
	for _, tt := range tests {
		a, _ := url.Parse(tt.from)
		b, _ := url.Parse(tt.to)
		if got := sameHost(a, b); got != tt.same {
			t.Errorf("sameHost(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.same)
		}
	}
}
