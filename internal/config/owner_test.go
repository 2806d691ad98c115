package config

import "testing"

func TestOwnerNameFromHostNames(t *testing.T) {
	for host, want := range map[string]string{
		"web01":                 "web01",
		"Web01.Example.COM":     "web01.example.com",
		"3f2a9c1d0b7e":          "3f2a9c1d0b7e",
		"host name with spaces": "host-name-with-spaces",
		"--odd--":               "odd",
		"":                      "calsyncd",
		"ünïcode":               "n-code",
		".leading.dot":          "leading.dot",
		"a234567890123456789012345678901234567890123456789012345678901234567890": "a23456789012345678901234567890123456789012345678901234567890123",
	} {
		got := ownerName(host)
		if got != want {
			t.Errorf("ownerName(%q) = %q, want %q", host, got, want)
		}
		if !ownerPattern.MatchString(got) {
			t.Errorf("ownerName(%q) = %q is not a valid owner name", host, got)
		}
	}
	if o := HostOwner(); !ownerPattern.MatchString(o) {
		t.Errorf("HostOwner() = %q is not a valid owner name", o)
	}
}
