package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written as Go writes it ("250ms", "15s",
// "1h30m"), with "d" accepted for days ("30d").
type Duration time.Duration

// D is the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// ParseDuration parses a Duration.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return 0, fmt.Errorf("duration %q is too long (at most %dd)", s, maxDays)
		case math.IsNaN(n) || math.IsInf(n, 0):
			return 0, fmt.Errorf("%q is not a number of days", s)
		case err != nil || strings.HasPrefix(days, "0x") || strings.HasPrefix(days, "0X"):
			return 0, fmt.Errorf("invalid duration %q (use e.g. 250ms, 15s, 2h or 30d)", s)
		case n < 0 || strings.HasPrefix(days, "-"):
			return 0, fmt.Errorf("negative duration %q", s)
		case n > float64(maxDays):
			return 0, fmt.Errorf("duration %q is too long (at most %dd)", s, maxDays)
		}
		return Duration(time.Duration(n * float64(24*time.Hour))), nil
	}
	if strings.Contains(strings.ToLower(s), "nan") || strings.Contains(strings.ToLower(s), "inf") {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use e.g. 250ms, 15s, 2h or 30d)", s)
	}
	if v < 0 || strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return Duration(v), nil
}

// maxDays is the longest Duration in whole days (about 292 years).
const maxDays = int64(math.MaxInt64 / int64(24*time.Hour))

// ByteSize is a size in bytes, written as "20MiB", "512KiB", "1GB" or a plain
// number of bytes.
type ByteSize int64

// ParseByteSize parses a ByteSize.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
	}
	mult := int64(1)
	num := s
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			mult = u.mult
			num = strings.TrimSpace(strings.TrimSuffix(s, u.suffix))
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("size %q is too large", s)
	case math.IsNaN(n) || math.IsInf(n, 0):
		return 0, fmt.Errorf("size %q is not a number", s)
	case err != nil || strings.HasPrefix(num, "0x") || strings.HasPrefix(num, "0X"):
		return 0, fmt.Errorf("invalid size %q (use e.g. 20MiB or 512KiB)", s)
	case n < 0 || strings.HasPrefix(num, "-"):
		return 0, fmt.Errorf("negative size %q", s)
	case n*float64(mult) >= math.MaxInt64:
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return ByteSize(n * float64(mult)), nil
}

func (b ByteSize) String() string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", b>>10)
	}
	return fmt.Sprintf("%dB", int64(b))
}
