package config

import (
	"os"
	"strings"
)

// HostOwner is the owner name an installation takes when its configuration
// names none and its database holds none: this host's name, lowercased and
// cut to what an owner name may be ("calsyncd" when there is none).
func HostOwner() string {
	h, err := os.Hostname()
	if err != nil {
		return "calsyncd"
	}
	return ownerName(h)
}

func ownerName(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.':
			if b.Len() > 0 {
				b.WriteRune(r)
			}
		default:
			if b.Len() > 0 {
				b.WriteByte('-')
			}
		}
		if b.Len() >= 63 {
			break
		}
	}
	s := strings.Trim(b.String(), ".-_")
	if len(s) > 63 {
		s = strings.Trim(s[:63], ".-_")
	}
	if s == "" || !ownerPattern.MatchString(s) {
		return "calsyncd"
	}
	return s
}
