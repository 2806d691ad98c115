// Package tz resolves the time zones feeds name: IANA names and legacy
// aliases, Windows zone ids (the CLDR table, rebuilt by go generate),
// prefixed and display names, and a feed's own VTIMEZONE rules matched
// against the IANA zones (or used as they are when none matches).
package tz

//go:generate sh -c "cd ../../tools/cldr && npm ci --no-audit --no-fund"
//go:generate go run gen_zones.go -cldr ../../tools/cldr/node_modules -o zones_cldr.go

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	// The zone database travels with the binary: Debian and others moved
	// legacy names (US/Pacific) out of the default tzdata package, and a
	// feed must not resolve differently from one host to the next.
	_ "time/tzdata"
)

// How says how a TZID was resolved, for warnings and tests.
type How string

// Ways of resolving a TZID.
const (
	ByName     How = "name"    // an IANA name or legacy alias
	ByWindows  How = "windows" // a Windows zone id (CLDR)
	ByPrefix   How = "prefix"  // /mozilla.org/.../Europe/Berlin
	ByGuess    How = "guess"   // a display name or city: (UTC-05:00) Eastern Time
	ByRules    How = "rules"   // the feed's VTIMEZONE matched an IANA zone
	ByCustom   How = "custom"  // the feed's VTIMEZONE, its own rules (Name "")
	Unresolved How = "unknown" // nothing: read as floating
)

// UTC is the canonical name given to UTC and its aliases.
const UTC = "UTC"

// Zone is a resolved TZID.
type Zone struct {
	// Name is the IANA name, "" for custom rules and unresolved zones.
	Name string
	Loc  *time.Location
	How  How
	// custom converts wall times when no IANA zone matched the VTIMEZONE.
	custom *Definition
}

var locations sync.Map // IANA name -> *time.Location

// loadLocation loads an IANA zone once per process.
func loadLocation(name string) (*time.Location, bool) {
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location), true
	}
	if name == "" || strings.ContainsAny(name, " \\\x00") || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, false
	}
	l, err := time.LoadLocation(name)
	if err != nil || l == time.Local {
		return nil, false
	}
	locations.Store(name, l)
	return l, true
}

// canonicalZone returns the IANA name for an IANA name or legacy alias,
// matched without regard to case ("Europe/lisbon", "US/Pacific").
func canonicalZone(name string) (string, bool) {
	name = strings.TrimSpace(name)
	lower := strings.ToLower(name)
	switch lower {
	case "utc", "z", "zulu", "gmt", "etc/utc", "etc/gmt", "etc/uct", "uct", "universal", "etc/universal", "etc/zulu", "gmt0", "etc/gmt0", "greenwich", "etc/greenwich":
		return UTC, true
	}
	if c, ok := zoneAliases[lower]; ok {
		if _, ok := loadLocation(c); ok {
			return c, true
		}
	}
	if _, ok := loadLocation(name); ok {
		return name, true
	}
	return "", false
}

// windowsZone maps a Windows zone id ("W. Europe Standard Time") to IANA.
func windowsZone(name string) (string, bool) {
	c, ok := windowsZones[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return "", false
	}
	if c == "Etc/UTC" {
		return UTC, true
	}
	return c, true
}

// cityZones indexes zones by their exemplar city ("sydney", "canberra",
// "new york"), built from the alias table.
var cityZones = sync.OnceValue(func() map[string]string {
	m := make(map[string]string, len(zoneAliases))
	keys := make([]string, 0, len(zoneAliases))
	for k := range zoneAliases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i := strings.LastIndexByte(k, '/')
		if i < 0 || strings.HasPrefix(k, "etc/") {
			continue
		}
		city := strings.ReplaceAll(k[i+1:], "_", " ")
		// The canonical name wins over a link that names the same city.
		if _, taken := m[city]; !taken || strings.EqualFold(zoneAliases[k], k) {
			m[city] = zoneAliases[k]
		}
	}
	return m
})

// candidateZones are every canonical IANA zone, the Windows "golden" zones
// first, in a fixed order: the order in which a VTIMEZONE's rules are tried.
var candidateZones = sync.OnceValue(func() []string {
	seen := map[string]bool{UTC: true}
	var golden, rest []string
	for _, c := range windowsZones {
		if !seen[c] && c != "Etc/UTC" {
			seen[c] = true
			golden = append(golden, c)
		}
	}
	for _, c := range zoneAliases {
		if !seen[c] && !strings.HasPrefix(c, "Etc/") {
			seen[c] = true
			rest = append(rest, c)
		}
	}
	sort.Strings(golden)
	sort.Strings(rest)
	return append(golden, rest...)
})

// directZone resolves a TZID by name alone: an IANA name or alias, a
// Windows id, or a prefixed IANA name (/mozilla.org/20070129_1/Europe/Berlin).
func directZone(tzid string) (string, How, bool) {
	if c, ok := canonicalZone(tzid); ok {
		return c, ByName, true
	}
	if c, ok := windowsZone(tzid); ok {
		return c, ByWindows, true
	}
	if strings.HasPrefix(tzid, "/") || strings.Count(tzid, "/") >= 2 {
		parts := strings.Split(strings.Trim(tzid, "/"), "/")
		for i := 1; i < len(parts); i++ {
			if c, ok := canonicalZone(strings.Join(parts[i:], "/")); ok && (i < len(parts)-1 || c == UTC) {
				return c, ByPrefix, true
			}
		}
	}
	return "", "", false
}

// guessZones lists, best first, the zones a display-name or otherwise
// unknown TZID may mean: "(UTC-05:00) Eastern Time (US & Canada)",
// "Canberra, Melbourne, Sydney", "Pacific Time (US & Canada), Tijuana",
// "Eastern", "Germany/Berlin". A "(UTC±hh:mm)" prefix filters by standard
// offset.
func guessZones(tzid string) []string {
	s := strings.TrimSpace(tzid)
	offset, hasOffset := 0, false
	if len(s) > 4 && s[0] == '(' {
		if end := strings.IndexByte(s, ')'); end > 0 {
			offset, hasOffset = parseGMTOffset(s[1:end])
			s = strings.TrimSpace(s[end+1:])
		}
	}
	var out []string
	add := func(c string, ok bool) {
		if ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	tryName := func(n string) {
		n = strings.TrimSpace(n)
		if n == "" {
			return
		}
		add(canonicalZone(n))
		add(windowsZone(n))
		add(windowsZone(n + " Standard Time"))
		if base, ok := strings.CutSuffix(n, " Time"); ok {
			add(windowsZone(base + " Standard Time"))
		}
		if c, ok := cityZones()[strings.ToLower(n)]; ok {
			add(c, true)
		}
	}
	tryName(s)
	// Drop parenthesised remarks: "Eastern Time (US & Canada)".
	bare := s
	for {
		i := strings.IndexByte(bare, '(')
		j := strings.IndexByte(bare, ')')
		if i < 0 || j < i {
			break
		}
		bare = bare[:i] + bare[j+1:]
	}
	tryName(bare)
	for _, part := range strings.FieldsFunc(bare, func(r rune) bool { return r == ',' || r == '/' || r == ';' }) {
		tryName(part)
	}
	if !hasOffset {
		return out
	}
	// Keep the zones whose standard (lowest) offset is the one named.
	var kept []string
	for _, c := range out {
		if loc, ok := loadLocation(c); ok && standardOffset(loc) == offset {
			kept = append(kept, c)
		}
	}
	return kept
}

// parseGMTOffset reads "UTC-05:00", "GMT+10:00", "UTC" as seconds east.
func parseGMTOffset(s string) (int, bool) {
	s = strings.TrimSpace(strings.ToUpper(s))
	rest, ok := strings.CutPrefix(s, "UTC")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "GMT"); !ok {
			return 0, false
		}
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return 0, true
	}
	sign := 1
	switch rest[0] {
	case '-':
		sign = -1
	case '+':
	default:
		return 0, false
	}
	h, m, _ := strings.Cut(rest[1:], ":")
	hh, err := strconv.Atoi(h)
	if err != nil {
		return 0, false
	}
	mm := 0
	if m != "" {
		if mm, err = strconv.Atoi(m); err != nil {
			return 0, false
		}
	}
	return sign * (hh*3600 + mm*60), true
}

// standardOffset is a zone's lowest offset over a recent year: its
// standard time, in either hemisphere.
func standardOffset(loc *time.Location) int {
	low := 1 << 30
	for m := time.January; m <= time.December; m += 3 {
		_, off := time.Date(2024, m, 15, 12, 0, 0, 0, time.UTC).In(loc).Zone()
		low = min(low, off)
	}
	return low
}

// Resolver resolves the TZIDs of one feed, once each.
type Resolver struct {
	defs  map[string]*Definition
	cache map[string]*Zone
	// years bounds the years in which each TZID is used, for matching a
	// VTIMEZONE's rules against IANA zones.
	years map[string][2]int
	// prefer are the feed's and subscription's zones, tried first when
	// several IANA zones share a VTIMEZONE's rules.
	prefer []string
	// matched counts VTIMEZONEs matched against IANA zones so far.
	matched int
}

// maxRuleMatches bounds the VTIMEZONEs of one feed matched by their rules.
const maxRuleMatches = 32

// NewResolver returns a resolver for one feed.
func NewResolver() *Resolver {
	return &Resolver{defs: map[string]*Definition{}, cache: map[string]*Zone{}, years: map[string][2]int{}}
}

// Define gives tzid the feed's own rules. The first definition of a TZID
// wins; Define reports whether this one was taken.
func (r *Resolver) Define(tzid string, d *Definition) bool {
	if _, dup := r.defs[tzid]; dup {
		return false
	}
	r.defs[tzid] = d
	return true
}

// Prefer tries the IANA zone name first when several share a VTIMEZONE's
// rules (the feed's and the subscription's zones).
func (r *Resolver) Prefer(name string) { r.prefer = append(r.prefer, name) }

// UseYear records that tzid is used in year, for matching its VTIMEZONE's
// rules over the years that matter.
func (r *Resolver) UseYear(tzid string, year int) {
	y, ok := r.years[tzid]
	if !ok {
		r.years[tzid] = [2]int{year, year}
		return
	}
	r.years[tzid] = [2]int{min(y[0], year), max(y[1], year)}
}

// Resolve returns the zone for a TZID as written in the feed.
func (r *Resolver) Resolve(tzid string) *Zone {
	if z, ok := r.cache[tzid]; ok {
		return z
	}
	z := r.lookup(tzid)
	r.cache[tzid] = z
	return z
}

func (r *Resolver) lookup(tzid string) *Zone {
	if name, how, ok := directZone(tzid); ok {
		return namedZone(name, how)
	}
	guesses := guessZones(tzid)
	def := r.defs[tzid]
	if def == nil {
		if len(guesses) > 0 {
			return namedZone(guesses[0], ByGuess)
		}
		return &Zone{How: Unresolved}
	}
	own := func() *Zone {
		return &Zone{Loc: def.Location(), custom: def, How: ByCustom}
	}
	if r.matched >= maxRuleMatches {
		// Matching costs milliseconds; a feed with hundreds of custom
		// zones gets the feed's own rules past the first few.
		return own()
	}
	r.matched++
	from, to := r.usedIn(tzid)
	if z := r.matchRules(def, guesses, from, to); z != nil {
		return z
	}
	// No IANA zone: the feed's own rules, never UTC.
	return own()
}

// namedZone is the IANA zone name, found as how says.
func namedZone(name string, how How) *Zone {
	if name == UTC {
		return &Zone{Name: UTC, Loc: time.UTC, How: how}
	}
	loc, _ := loadLocation(name)
	return &Zone{Name: name, Loc: loc, How: how}
}

// usedIn is the span of years the feed uses tzid in (this year when it is
// not known), at most 41 years: where a VTIMEZONE's rules must match.
func (r *Resolver) usedIn(tzid string) (from, to time.Time) {
	years, ok := r.years[tzid]
	if !ok {
		y := time.Now().Year()
		years = [2]int{y, y}
	}
	from = time.Date(years[0], 1, 1, 0, 0, 0, 0, time.UTC)
	to = time.Date(min(years[1], years[0]+40)+1, 1, 1, 0, 0, 0, 0, time.UTC)
	return from, to
}

// matchRules is the IANA zone that keeps def's rules from from to to, nil
// when none does. The exact rules first, then the same offsets away from
// transition nights (the IANA zone with its switches written at another
// hour): by the TZID's name (guesses), then the feed's and subscription's
// zones, then every zone.
func (r *Resolver) matchRules(def *Definition, guesses []string, from, to time.Time) *Zone {
	for _, match := range []func(*time.Location, time.Time, time.Time) bool{def.matches, def.near} {
		tried := map[string]bool{}
		try := func(names []string) *Zone {
			for _, n := range names {
				if tried[n] {
					continue
				}
				tried[n] = true
				loc, ok := loadLocation(n)
				if ok && match(loc, from, to) {
					return namedZone(n, ByRules)
				}
			}
			return nil
		}
		if z := try(guesses); z != nil {
			return z
		}
		if z := try(r.prefer); z != nil {
			return z
		}
		if z := try(candidateZones()); z != nil {
			return z
		}
	}
	return nil
}

// WallTime places a floating wall-clock time (given as UTC fields) in z.
// ok is false when the zone is unresolved and the caller must treat the
// time as floating. A time in a daylight-saving gap is read with the
// offset before the gap (RFC 5545 §3.3.5): 02:30 on a night that jumps
// from 02:00 to 03:00 is 03:30.
func (z *Zone) WallTime(wall time.Time) (time.Time, bool) {
	switch {
	case z.Loc != nil:
		return At(wall, z.Loc), true
	case z.custom != nil:
		return z.custom.toUTC(wall), true
	}
	return time.Time{}, false
}

// At is the instant of a wall-clock time (given as UTC fields) in loc,
// a time in a daylight-saving gap read with the offset in force before
// the gap (RFC 5545 §3.3.5), where Go's time.Date is free to pick either.
func At(wall time.Time, loc *time.Location) time.Time {
	t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), loc)
	if h, m, _ := t.Clock(); h == wall.Hour() && m == wall.Minute() && t.Day() == wall.Day() {
		return t
	}
	return fromWall(wall, func(i time.Time) int { _, off := i.In(loc).Zone(); return off })
}

// fromWall converts a wall-clock time (as UTC fields) to the instant
// under offsetAt (seconds east at an instant). Where no offset is
// consistent (a gap: the clock jumps forward, so the offset rises), the
// lower, earlier one is used.
func fromWall(wall time.Time, offsetAt func(time.Time) int) time.Time {
	at := func(off int) time.Time { return wall.Add(-time.Duration(off) * time.Second) }
	o := offsetAt(at(offsetAt(wall)))
	i := at(o)
	o2 := offsetAt(i)
	if o2 == o {
		return i
	}
	return at(min(o, o2))
}
