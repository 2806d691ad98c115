package feed

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/calsyncd/calsyncd/internal/feed/corpus"
	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

// scanCases are bodies that take the scanner off its fast path or through
// golang-ical's failures: each must read exactly as golang-ical reads it.
var scanCases = map[string]string{
	"backslash escapes a quote in a parameter (unreadable)": "BEGIN:VEVENT\nUID:a\nSUMMARY;X=\"q:r\":Named\nDTSTART;X=\"a\\\";TZID=\"b\":20260101T100000\nEND:VEVENT\n" +
		"BEGIN:VEVENT\nUID:b\nDTSTART:20260102T100000Z\nEND:VEVENT\n",
	"backslash in a parameter (readable)":     "X-A;CN=\"a\\,b\":v\nBEGIN:VEVENT\nUID:a\nDTSTART;TZID=\"Europe\\/Berlin\":20260101T100000\nEND:VEVENT\n",
	"space in a parameter name (unreadable)":  "BEGIN:VEVENT\nUID:  \nUID:second\nDTSTART;X Y=1:20260101T100000Z\nEND:VEVENT\n",
	"junk before a parameter name":            "BEGIN:VEVENT\nUID:a\nDTSTART;/X=1:20260101T100000Z\nEND:VEVENT\n",
	"VALUE=TEXT on a date":                    "BEGIN:VEVENT\nUID:a\nDTSTART;VALUE=TEXT:2026\\,01\nDTSTART;VALUE=text:2026\\,02\nEND:VEVENT\n",
	"unreadable calendar property":            "X-WR-CALNAME:Lost\nX-BAD;A=\"x\\\":y\nBEGIN:VEVENT\nUID:a\nDTSTART:20260101T100000Z\nEND:VEVENT\n",
	"unreadable calendar property in between": "X-WR-CALNAME:Lost\nBEGIN:VEVENT\nUID:a\nDTSTART:20260101T100000Z\nEND:VEVENT\nX-BAD;A=\"x\\\":y\n",
	"unreadable observance": "BEGIN:VTIMEZONE\nTZID:Custom\nBEGIN:STANDARD\nDTSTART:19700101T000000\nTZOFFSETTO;X=\"a\\\":+0100\nEND:STANDARD\nEND:VTIMEZONE\n" +
		"BEGIN:VTIMEZONE\nTZID:Other\nBEGIN:STANDARD\nDTSTART:19700101T000000\nTZOFFSETTO:+0200\nTZOFFSETFROM:+0200\nEND:STANDARD\nEND:VTIMEZONE\n" +
		"BEGIN:VEVENT\nUID:a\nDTSTART;TZID=Other:20260101T100000\nEND:VEVENT\n",
	"unreadable sub-component of an X component": "BEGIN:X-THING\nUID:x\nBEGIN:X-PART\nSUMMARY:in part\nDTSTART;B=\"c\\\":d\nEND:X-PART\nEND:X-THING\nBEGIN:X-THING\nNOTE:ok\nEND:X-THING\n",
	"unreadable line after an observance": "BEGIN:VTIMEZONE\nTZID:Custom\nBEGIN:DAYLIGHT\nDTSTART:19700101T000000\nTZOFFSETTO:+0100\nEND:DAYLIGHT\n" +
		"X-LIC-LOCATION;X=\"\\\":Europe/Paris\nEND:VTIMEZONE\n",
	"escape in a component name": "BEGIN:X-A\\,B\nNOTE:x\nEND:X-A\\,B\nBEGIN:X-A\\NB\nEND:X-A\\NB\n",
	"parameters repeated and listed": "BEGIN:VEVENT\nUID:a\nDTSTART;TZID=A;TZID=B:20260101T100000\nEXDATE;X=a,\"b;c\",d;VALUE=DATE-TIME:20260108T100000Z\n" +
		"RDATE;TZID=:20260109T100000\nDTEND;TZID=\"A;B:C\";X=\"\":20260101T110000\nEND:VEVENT\n",
	"text escapes": "X-WR-CALNAME:a\\\\nb\\Nc\\;d\\,e\\x\\\nBEGIN:VEVENT\nUID:a\\,b\nSUMMARY:\\\\\\n\\\\,tail\\\nDESCRIPTION:\\\nLOCATION:\\x\\\\\nURL:http://x/a\\,b\n" +
		"DTSTART:20260101T100000Z\nEND:VEVENT\n",
	"tab, DEL and bytes that are not UTF-8": "BEGIN:VEVENT\nUID:\xff\xfe\nSUMMARY;LANGUAGE=\"e\tn\x7f\":\xc3\x28 \x00 x\nDTSTART;TZID=\"\xe9t\xe9\":20260101T100000\nEND:VEVENT\n",
	"empty values":                          "X-EMPTY:\nBEGIN:VEVENT\nUID:a\nSUMMARY:\nDTSTART:20260101T100000Z\nEND:VEVENT\n",
	"VTODO and VALARM dropped, VALARM kept at the top": "BEGIN:VTODO\nUID:t\nEND:VTODO\nBEGIN:VALARM\nACTION:DISPLAY\nEND:VALARM\nBEGIN:VALARM\nACTION;X=\"\\\":z\nEND:VALARM\n" +
		"BEGIN:VEVENT\nUID:a\nDTSTART:20260101T100000Z\nBEGIN:VALARM\nX;Y=\"\\\":z\nEND:VALARM\nEND:VEVENT\n",
	"VALARM of a VEVENT: ACTION and TRIGGER kept, odd ones dropped": "BEGIN:VEVENT\nUID:a\nDTSTART:20260101T100000Z\nCATEGORIES:A,B\nCATEGORIES;X=\"\\\":z\n" +
		"BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER;RELATED=END:-PT5M\nTRIGGER;X=\"\\\":-PT1M\nDESCRIPTION:x\nBEGIN:X-IN\nY:z\nEND:X-IN\nEND:VALARM\nEND:VEVENT\n",
	"STANDARD and DAYLIGHT at the top":       "BEGIN:STANDARD\nTZOFFSETTO:+0100\nEND:STANDARD\nBEGIN:DAYLIGHT\nEND:DAYLIGHT\n",
	"calendars concatenated with junk":       "BEGIN:VEVENT\nUID:a\nDTSTART:20260101T100000Z\nEND:VEVENT\nEND:VCALENDAR\nBEGIN:VCALENDAR\nX-WR-CALNAME:second\n",
	"repairs: unclosed, stray END, no value": "BEGIN:VEVENT\nUID:a\nDTSTART:20260101T100000Z\nBEGIN:VEVENT\nUID:b\nDTSTART:20260102T100000Z\nEND:VTODO\nSUMMARY;X=1\nEND:VEVENT\n",
}

func wrapCase(body string) []byte {
	return []byte("BEGIN:VCALENDAR\nVERSION:2.0\n" + body + "END:VCALENDAR\n")
}

// TestScanMatchesGolangICal holds the scanner to what golang-ical reads, on
// the repository's feeds, the fuzz seeds, generated feeds and the cases
// that leave the fast path.
func TestScanMatchesGolangICal(t *testing.T) {
	for name, body := range scanCases {
		t.Run(name, func(t *testing.T) { checkScanAgrees(t, wrapCase(body)) })
	}
	t.Run("CR line endings", func(t *testing.T) {
		checkScanAgrees(t, bytes.ReplaceAll(wrapCase(scanCases["parameters repeated and listed"]), []byte("\n"), []byte("\r")))
	})
	t.Run("generated", func(t *testing.T) { checkScanAgrees(t, feedgen.Generate(300)) })
	files, _ := filepath.Glob("../../testdata/feeds/*.ics")
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	if len(files) == 0 || len(seeds) == 0 {
		t.Fatalf("%d feeds, %d fuzz seeds: testdata missing", len(files), len(seeds))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) { checkScanAgrees(t, mustRead(t, path)) })
	}
	for _, path := range seeds {
		t.Run("seed "+filepath.Base(path), func(t *testing.T) { checkScanAgrees(t, fuzzSeed(t, path)) })
	}
}

// TestScanMatchesGolangICalOnCorpus does the same on every file of the
// shared corpus.
func TestScanMatchesGolangICalOnCorpus(t *testing.T) {
	dir, files := corpus.Files(t)
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkScanAgrees(t, mustRead(t, filepath.Join(dir, name)))
		})
	}
}

// FuzzScanMatchesGolangICal: on any body, the scanner and golang-ical read
// the same components and the parse gives the same calendar, whether the
// body is in memory or streamed in pieces.
func FuzzScanMatchesGolangICal(f *testing.F) {
	for _, body := range scanCases {
		f.Add(wrapCase(body))
	}
	files, _ := filepath.Glob("../../testdata/feeds/*.ics")
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	if dir, ok := corpus.Available(); ok {
		more, _ := filepath.Glob(filepath.Join(dir, "*", "*.ics"))
		files = append(files, more...)
	}
	for _, path := range files {
		if body := mustRead(f, path); len(body) <= 64<<10 {
			f.Add(body)
		}
	}
	for _, path := range seeds {
		f.Add(fuzzSeed(f, path))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkScanAgrees(t, body)
	})
}

func checkScanAgrees(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := referenceTree(body)
	got, err := scanTree(body)
	if !sameError(err, wantErr) {
		t.Fatalf("scan error %v, golang-ical %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if g, w := got.dump(), want.dump(); g != w {
		t.Fatalf("the scanner reads\n%s\ngolang-ical reads\n%s", g, w)
	}
	opts := []Options{{}}
	if len(body) <= 256<<10 {
		opts = append(opts, Options{Identity: IdentityContent})
	}
	for _, o := range opts {
		wantCal, wantErr := referenceParse(body, o)
		cal, err := ParseBytes(body, o)
		if !sameError(err, wantErr) {
			t.Fatalf("ParseBytes error %v, reference %v", err, wantErr)
		}
		if g, w := dumpCalendar(cal), dumpCalendar(wantCal); g != w {
			t.Fatalf("identity %q: ParseBytes gives\n%s\nthe reference\n%s", o.Identity, g, w)
		}
	}
	// Streamed: in pieces of every size that splits CRLFs and folds.
	want0 := dumpCalendar(mustParseBytes(t, body))
	readers := map[string]io.Reader{"half": iotest.HalfReader(bytes.NewReader(body)), "whole": bytes.NewReader(body)}
	if len(body) <= 16<<10 {
		readers["one byte"] = iotest.OneByteReader(bytes.NewReader(body))
	}
	for name, r := range readers {
		cal, err := Parse(r, Options{})
		if err != nil {
			t.Fatalf("Parse (%s reader): %v", name, err)
		}
		if g := dumpCalendar(cal); g != want0 {
			t.Fatalf("Parse (%s reader) gives\n%s\nParseBytes\n%s", name, g, want0)
		}
	}
}

func mustParseBytes(t *testing.T, body []byte) *Calendar {
	t.Helper()
	cal, err := ParseBytes(body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cal
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzSeed reads a file of testdata/fuzz: "go test fuzz v1" and one
// []byte("...") line.
func fuzzSeed(t testing.TB, path string) []byte {
	t.Helper()
	lines := strings.SplitN(string(mustRead(t, path)), "\n", 3)
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "[]byte(") {
		t.Fatalf("%s: not a fuzz seed", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// TestParseStreamErrors: a stream that breaks off fails the parse with
// the read error, never a calendar that lost its end.
func TestParseStreamErrors(t *testing.T) {
	body := feedgen.Generate(50)
	broken := errors.New("connection reset")
	_, err := Parse(io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(broken)), Options{})
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "feed: read") {
		t.Fatalf("err = %v", err)
	}
	_, err = Parse(iotest.TimeoutReader(bytes.NewReader(body)), Options{})
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
}

// TestNamesInterned: every name the lexer compares against is in the name
// table with its flags, so that a name not found is none of them; and
// singularKey is singularNames.
func TestNamesInterned(t *testing.T) {
	for _, set := range []map[string]bool{knownProperty, eventProperties, freeText, eventLike, ignoredComponents} {
		for n := range set {
			e := lookupName([]byte(strings.ToLower(n)))
			if e.name != n || e.known != knownProperty[n] || e.event != eventProperties[n] || e.free != freeText[n] {
				t.Errorf("%q: entry %+v", n, e)
			}
		}
	}
	for _, n := range []string{"", "X-UNHEARD-OF", "VEVENTS", "DTSTAR", strings.Repeat("A", 41)} {
		if e := lookupName([]byte(n)); e != unknownName {
			t.Errorf("%q found: %+v", n, e)
		}
	}
	for n, k := range singularNames {
		if got, ok := singularKey(n); !ok || got != k {
			t.Errorf("singularKey(%q) = %v, %v", n, got, ok)
		}
	}
	if _, ok := singularKey("RRULE"); ok {
		t.Error("RRULE is not singular")
	}
}
